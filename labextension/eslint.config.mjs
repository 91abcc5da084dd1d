// ESLint flat config for the labextension sources (`jlpm lint`).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['labextension/src/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { args: 'none' }],
      eqeqeq: ['error', 'smart'],
      'no-restricted-properties': [
        'error',
        { property: 'innerHTML', message: 'Render text with textContent / text nodes.' },
        { property: 'outerHTML', message: 'Render text with textContent / text nodes.' },
        { property: 'insertAdjacentHTML', message: 'Render text with textContent / text nodes.' }
      ]
    }
  }
);
