/**
 * The constructs' Kubernetes name checks (DNS-1123 labels and subdomains): written once in
 * contract/_names.ts, which the runtime uses too (the runtime imports nothing from constructs/).
 * Internal: not exported from any barrel.
 */
export { checkDnsLabel, checkDnsSubdomain, isDnsLabel, isDnsSubdomain } from '../contract/_names.js';
