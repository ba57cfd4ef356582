'use strict';
// require('klutch-kit/catalogue') from CommonJS: checks the Node.js version, then loads the ES module build.
require('./_node.cjs').checkNode();
module.exports = require('../lib/constructs/catalogue/index.js');
