// One lint setup for the whole repo: typescript-eslint's type-checked rules.
// no-floating-promises matters most here: an unawaited publish is a lost event.
import js from '@eslint/js'
import { defineConfig } from 'eslint/config'
import tseslint from 'typescript-eslint'

export default defineConfig(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      '**/src/generated/**',
      '**/*.config.*',
      '**/.turbo/**',
      // A project installed apart from the workspace by its test (not part of any tsconfig).
      'packages/messaging/test/cloudevents-sdk/**',
      // The admin's quick start, installed apart from the workspace from packed tarballs by its test.
      'packages/messaging-admin/examples/**',
    ],
  },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
)
