/** `secrets reseal` (src/secrets/reseal.ts): the second half of a master-key rotation (docs/operations.md). */
import { loadConfig } from '../config.ts';
import { resealAll } from '../secrets/reseal.ts';
import { print, withServices, type CliCommand } from './context.ts';

export const secretsCommands: CliCommand[] = [
  {
    name: 'secrets reseal',
    usage: 'secrets reseal [--json]   after a master-key rotation: every stored secret sealed under MASTER_KEY',
    async run(values) {
      if (!loadConfig().masterKeyPrevious) {
        console.error('botlink cli: secrets reseal needs MASTER_KEY_PREVIOUS (the old key) beside MASTER_KEY (the new one).');
        return 1;
      }
      const report = await withServices(({ db, secrets }) => resealAll(db, secrets));
      print(values, report, () => [
        `Resealed ${report.resealed} secret${report.resealed === 1 ? '' : 's'}; ${report.current} already under the current key.`,
        ...(report.unreadable.length > 0 ? [`Opened with neither key (left as they are): ${report.unreadable.join(', ')}`] : []),
      ]);
      return report.unreadable.length === 0 ? 0 : 1;
    },
  },
];
