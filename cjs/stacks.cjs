'use strict';
// require('klutch-kit/stacks') from CommonJS: checks the Node.js version, then loads the ES module build.
require('./_node.cjs').checkNode();
module.exports = require('../lib/stacks/index.js');
