/**
 * The ids the request examples of lib/openapi-docs use (`example` of OperationDocs). They are valid values, so the document's
 * examples pass its own schemas; test/e2e/docs-examples.test.ts replaces each with a record it creates first, sends
 * every example to a fresh host, and expects the documented success status.
 */
export const EXAMPLE = {
  orgID: '3f6c2a1e-8d4b-4c7a-9e2f-5b1d0c9a7e31',
  userID: '9b2e4f71-0c3d-4a8e-b6f5-2d7c1e9a4b60',
  importJobID: '6571f0c2e4b0a1b2c3d4e5f6',
  /** An import job that has its result (I7). */
  importedJobID: '6571f0c2e4b0a1b2c3d4e5f7',
  uploadKey: 'uploads/3f6c2a1e-8d4b-4c7a-9e2f-5b1d0c9a7e31/6571f0c2e4b0a1b2c3d4e5f8/tasks.csv',
  bucket: 'dispatch-uploads',
  /** A planning with runsheet RS-1 and one located driver (`driverID`). */
  planningID: '0c4f8e2a-6b1d-4e7f-a3c9-8d2b5e1f7a40',
  versionRev: '3-kq7Lm2xP',
  /** The caller’s own driver profile’s `version_rev` (X9 shows it; A21 names it). */
  profileRev: '2-Hn5Wc8Rt',
  driverID: '5e8a1c3f-2b7d-4f9e-8c6a-1d4b7e2f9a53',
  /** A driver of the organisation that is not in the planning. */
  newDriverID: '5e8a1c3f-2b7d-4f9e-8c6a-1d4b7e2f9a54',
  /** A planning whose job was started (P9). */
  plannedID: '0c4f8e2a-6b1d-4e7f-a3c9-8d2b5e1f7a41',
  planningJobID: '7a2d9f4b-1e6c-4b8a-9f3d-2c5e8a1b4d67',
  /** An existing user’s address; its password is `password`. */
  email: 'ada.lovelace@example.com',
  /** A platform organisation (T10’s X-Platform-ID) and the address of one of its users (password `password`). */
  platformID: '7c1e9a4b-3d6f-4b2a-8e5c-0f9d2b7a6c18',
  platformEmail: 'katherine.johnson@example.com',
  password: 'a-good-long-password',
  /** An address no account has. */
  newEmail: 'grace.hopper@example.com',
  refreshToken: 'rt_3q2+7w8Yb1kZxJ0aVcLmN5pQ9sTuE4iR',
  invitationToken: 'inv_8Hc2LqW0zT5yNb3xKd7P',
  resetToken: 'rst_4Vn9QeX1mJ6aLs2wZc8K',
  /** A self-registered account not confirmed yet (A2), and the security code A3 mailed it. */
  unconfirmedEmail: 'alan.turing@example.com',
  unconfirmedUserID: '2a7e5c91-4f3b-4d8a-b1e6-9c0d3f5a7b28',
  securityCode: '482913',
  /** A partner authorization (T3), its client key, an auth code made for it (T8), an internal client (X7). */
  partnerID: '8e3b6d20-5c1f-4a9e-b7d4-3f2a1c9e6b85',
  clientKey: 'ck_5Jm8Qz2Lw7Xv4Rt1',
  authCode: 'ac_9Pd3Kx6Ns1Wq8Bz5',
  clientID: '1d9f7b35-8a2e-4c6d-9e0b-7f4a2c8d1e63',
  /** The OrgDriver role (X4 lists every role’s id). */
  orgDriverRoleID: 'b0e5c3a1-0003-4000-8000-000000000003',
  /** A runsheet–driver pair of the completed planning job `planningJobID`. */
  pairID: '4b8e2f6a-9c1d-4e3b-a7f5-0d6c2e9b3a14',
  /** A task the import worker imported for the caller's organisation (X10 lists it). */
  taskID: '6571f0c2e4b0a1b2c3d4e5fa',
  /** A notification of the calling Merchant. */
  notificationID: '6571f0c2e4b0a1b2c3d4e5f9',
  /** A planning whose job completed (its result exists). */
  completedID: '0c4f8e2a-6b1d-4e7f-a3c9-8d2b5e1f7a42',
  /** A tracking link's token (X27 made it for a task of the caller's organisation). */
  trackingToken: 'q3Z9vR2mXk7LwT4pN8cB1yH6fJ0sD5aG2eU7iO3rQ9w',
  /** A route build of the planning `planningID` (X23). */
  routeBuildID: '2f6b9d13-7e4a-4c5b-8a1f-3d9e6c2b7a58',
} as const;
