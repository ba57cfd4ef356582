/** Re-exports the catalogue builds on. Internal. */
import { StringConversion, Transform } from '../crossplane/index.js';

export * from '../dataservice/index.js';
export { Transform, StringConversion };
