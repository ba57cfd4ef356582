'use strict';
// require('klutch-kit/api') from CommonJS: checks the Node.js version, then loads the ES module build.
require('./_node.cjs').checkNode();
module.exports = require('../lib/contract/api/index.js');
