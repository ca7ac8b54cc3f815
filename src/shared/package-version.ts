import fs from 'node:fs';
import path from 'node:path';

/** This release's version, as package.json states it (from dist/src/shared, the repository's root is three folders up). */
export const PACKAGE_VERSION: string = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../../package.json'), 'utf8')).version;
