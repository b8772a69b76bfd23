// The HTTP listener's own connection budget, apart from the instruments' sockets. Each socket costs a file descriptor
// and the service has LimitNOFILE=4096 for everything (serial ports, instrument sockets, SQLite, PostgreSQL, LIMS):
// thousands of idle connections must not take them all. So the listener holds at most `max` sockets; a socket that
// is not serving a request is closed after `idleMs` of silence; and when the budget is spent, a new connection
// closes the oldest socket that is not serving a request rather than being refused, so /healthz from the watchdog
// or a technician's browser still gets through a flood of idle or half-sent connections.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionBudget {
  /** Sockets held at once. */
  max: number;
  /** Silence after which a socket without a request in progress is closed. */
  idleMs: number;
}

/** Counts for /metrics and the log. */
export interface ConnectionCounts {
  open: number;
  /** Idle sockets closed to make room for a new connection. */
  evicted: number;
  /** Connections refused because every held socket was serving a request. */
  refused: number;
}

/** Applies a ConnectionBudget to one http.Server. */
export class ConnectionGate {
  /** Open sockets in arrival order, each with the number of its requests in progress. */
  private readonly sockets = new Map<Socket, { serving: number }>();
  private evicted = 0;
  private refused = 0;

  constructor(
    private readonly budget: ConnectionBudget,
    private readonly onFull: (counts: ConnectionCounts) => void = () => {},
  ) {}

  /** Wires the server's connection, request and timeout events. */
  attach(server: Server): void {
    server.on('connection', (socket: Socket) => this.admit(socket));
    server.on('request', (req: IncomingMessage, res: ServerResponse) => this.serving(req.socket, res));
    // With a 'timeout' listener on the server, node:http leaves the decision to close to us.
    server.on('timeout', (socket: Socket) => {
      if ((this.sockets.get(socket)?.serving ?? 0) === 0) socket.destroy();
    });
  }

  counts(): ConnectionCounts {
    return { open: this.sockets.size, evicted: this.evicted, refused: this.refused };
  }

  private admit(socket: Socket): void {
    if (this.sockets.size >= this.budget.max && !this.evictOne()) {
      this.refused += 1;
      this.onFull(this.counts());
      socket.destroy();
      return;
    }
    this.sockets.set(socket, { serving: 0 });
    socket.setTimeout(this.budget.idleMs);
    socket.once('close', () => this.sockets.delete(socket));
  }

  private evictOne(): boolean {
    for (const [socket, state] of this.sockets) {
      if (state.serving > 0) continue;
      this.sockets.delete(socket);
      socket.destroy();
      this.evicted += 1;
      this.onFull(this.counts());
      return true;
    }
    return false;
  }

  private serving(socket: Socket, res: ServerResponse): void {
    const state = this.sockets.get(socket);
    if (!state) return;
    state.serving += 1;
    res.once('close', () => (state.serving -= 1));
  }
}
