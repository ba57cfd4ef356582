// Entry point of the Pulumi program (Pulumi.yaml `main`). Runs under ESM with tsx (`nodeargs: --import tsx`).
import { klutchProgram } from './program.js';

export default () => klutchProgram();
