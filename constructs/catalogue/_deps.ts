/** Re-exports the catalogue builds on. Internal. */
import { StringConversion, Transform } from '../crossplane/index.js';

export * from '../dataservice/index.js';
export { Transform, StringConversion };

/** A `string` transform converting to lower case (a8s log levels). */
export const StringConversionLower = (): Transform => Transform.stringConvert(StringConversion.TO_LOWER);
