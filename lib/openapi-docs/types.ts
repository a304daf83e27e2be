/**
 * What the OpenAPI document says of an operation beyond what the route table and its schemas say: kept under lib/,
 * out of shared/, so that no Lambda bundle carries it (shared/ and functions/ never import lib/openapi-docs).
 */
export interface OperationDocs {
  /** What the operation does (a sentence or two). */
  description: string;
  /**
   * A request the service accepts. Ids of records that must exist first are the values of lib/openapi-docs/examples.ts;
   * test/e2e/docs-examples.test.ts replaces them with records it creates and sends every example.
   */
  example?: {
    body?: unknown;
    query?: Readonly<Record<string, string>>;
    params?: Readonly<Record<string, string>>;
    headers?: Readonly<Record<string, string>>;
  };
  /**
   * Error statuses of this operation beyond those every operation documents (410 for used or expired tokens …), or
   * in its own words where the general one says too little (409 `timeline_full`, 429 of a quota).
   */
  errors?: Readonly<Partial<Record<409 | 410 | 413 | 415 | 422 | 429, string>>>;
  /** The body is multipart/form-data (I3): the name of its repeated file field. */
  multipart?: string;
  /** The multipart body's other fields (each a required UUID string): name and description. */
  multipartFields?: Readonly<Record<string, string>>;
  /**
   * Each request field's description, keyed by where it is: `params/<name>`, `query/<name>`, `headers/<name>`, or
   * `body/<member>/<member>…` with `*` for an array's items (`body/files/*\/storage_upload_key`). A field of
   * lib/openapi-docs/common.ts's FIELDS needs none here unless it says something else.
   */
  fields?: Readonly<Record<string, string>>;
}

/** One area's operations, keyed by route id. */
export type AreaDocs = Readonly<Record<string, OperationDocs>>;
