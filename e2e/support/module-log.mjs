// Preloaded with `node --import` in front of the CLI: records the URL of every module the process
// loads, one a line, in the file IC_MODULE_LOG names. The hooks run on Node's loader thread.
import { register } from 'node:module';

const log = process.env.IC_MODULE_LOG;
if (!log) throw new Error('module-log.mjs needs IC_MODULE_LOG (the file to record loaded modules in)');
register('./module-log-hooks.mjs', import.meta.url, { data: { log } });
