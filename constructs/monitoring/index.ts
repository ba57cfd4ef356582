/**
 * Monitoring of the bind backend and the konnector: scrape targets, alert rules, the Grafana dashboard
 * (the barrel of constructs/monitoring/).
 */
export * from './metrics-target.js';
export * from './scrape-kind.js';
export * from './metrics-scrape.js';
export * from './dashboard.js';
export * from './grafana-dashboard.js';
export * from './alert-rules.js';
export * from './klutch-alerts.js';
export * from './klutch-monitoring.js';
