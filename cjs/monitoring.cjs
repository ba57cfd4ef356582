'use strict';
// require('klutch-kit/monitoring') from CommonJS: checks the Node.js version, then loads the ES module build.
require('./_node.cjs').checkNode();
module.exports = require('../lib/constructs/monitoring/index.js');
