/**
 * The constructs' error helper (`fail()`, `show()`): written once in contract/_errors.ts, which
 * the runtime uses too (the runtime imports nothing from constructs/). Internal: not exported
 * from any barrel.
 */
export { fail, show } from '../contract/_errors.js';
