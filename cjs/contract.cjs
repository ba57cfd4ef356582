'use strict';
// require('klutch-kit/contract') from CommonJS: checks the Node.js version, then loads the ES module build.
require('./_node.cjs').checkNode();
module.exports = require('../lib/contract/index.js');
