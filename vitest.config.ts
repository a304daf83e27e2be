import { defineConfig } from 'vitest/config';

const env = {
  LOG_LEVEL: 'SILENT',
  POWERTOOLS_METRICS_DISABLED: 'true',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
};

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'tests',
          include: ['test/**/*.test.ts'],
          exclude: ['test/proof/**'],
          globalSetup: ['test/support/global-setup.ts'],
          // Every file records the AWS calls its functions make, for the IAM proof below.
          setupFiles: ['test/support/record-setup.ts'],
          // Each file gets its own process and its own table namespace; the emulators are shared.
          pool: 'forks',
          testTimeout: 30_000,
          hookTimeout: 60_000,
          env,
          sequence: { groupOrder: 0 },
        },
      },
      {
        // The IAM proof reads what every other file recorded, so it runs after all of them.
        test: {
          name: 'proof',
          include: ['test/proof/**/*.test.ts'],
          pool: 'forks',
          testTimeout: 120_000,
          // Its beforeAll synthesizes the whole app: ~9.6 s alone on this VM, past the 10 s default under load.
          hookTimeout: 120_000,
          env,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
