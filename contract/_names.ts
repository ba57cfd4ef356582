/**
 * The one set of Kubernetes name checks of klutch-kit (DNS-1123 labels and subdomains), used by
 * the constructs, the topology, the stacks and the runtime's option checks (in contract/ because
 * both sides use it; constructs/_names.ts re-exports it). Failures go through `fail()` of
 * `_errors.ts`. Internal: not exported from any barrel.
 */
import { fail } from './_errors.js';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A DNS-1123 label of at most `maxLength` characters (63 unless a caller needs room for a suffix). */
export function isDnsLabel(v: unknown, maxLength = 63): v is string {
  return typeof v === 'string' && v.length <= maxLength && DNS_LABEL.test(v);
}

/** A DNS-1123 subdomain (dot-separated labels, at most 253 characters); `minDots` for API groups and hosts. */
export function isDnsSubdomain(v: unknown, minDots = 0): v is string {
  return typeof v === 'string' && v.length <= 253 && DNS_SUBDOMAIN.test(v) && v.split('.').length > minDots;
}

/** Returns `v`, or throws `<prop>: <v> is not a DNS-1123 label (...)`. */
export function checkDnsLabel(prop: string, v: unknown, maxLength = 63): string {
  if (!isDnsLabel(v, maxLength)) {
    fail(prop, v, `is not a DNS-1123 label (lower-case letters, digits and "-", starting and ending alphanumeric, at most ${maxLength} characters)`);
  }
  return v;
}

/** Returns `v`, or throws `<prop>: <v> is not a DNS-1123 subdomain (...)`. */
export function checkDnsSubdomain(prop: string, v: unknown): string {
  if (!isDnsSubdomain(v)) fail(prop, v, 'is not a DNS-1123 subdomain (dot-separated DNS-1123 labels, at most 253 characters)');
  return v;
}
