/**
 * A real SMTP server on loopback (the smtp-server package) that keeps what it receives, parsed (mailparser), for the
 * tests of email (invites, resets, replies to visitors who left). `refuse(n)` answers the next n messages 451 (try
 * later), as a busy server would.
 */
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string[];
  subject: string;
  text: string;
  html: string;
}

export interface TestSmtp {
  /** `smtp://127.0.0.1:<port>`: the SMTP_URL to give the service. */
  url: string;
  /** Every message received, in order. */
  received: ReceivedMail[];
  /** The next `n` messages are refused with 451. */
  refuse(n: number): void;
  /** How many of those refusals are still to come. */
  refusalsLeft(): number;
  close(): Promise<void>;
}

export async function startTestSmtp(): Promise<TestSmtp> {
  const received: ReceivedMail[] = [];
  let refusing = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (refusing > 0) {
          refusing--;
          return callback(Object.assign(new Error('Try again later'), { responseCode: 451 }));
        }
        void simpleParser(Buffer.concat(chunks)).then((mail) => {
          received.push({ to: session.envelope.rcptTo.map((r) => r.address), subject: mail.subject ?? '', text: mail.text ?? '', html: typeof mail.html === 'string' ? mail.html : '' });
          callback();
        }, callback);
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as { port: number }).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    refuse: (n) => {
      refusing = n;
    },
    refusalsLeft: () => refusing,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
