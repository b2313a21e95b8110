package org.rdmapanama.bench;

import org.rdmapanama.bench.echo.EchoClient;
import org.rdmapanama.bench.echo.EchoServer;

import java.io.PrintStream;

/** {@code rdma-bench echo-server} and {@code echo-client HOST}: the channel guide's example, as it is written. */
final class EchoCommand {
    private EchoCommand() {}

    static int run(String which, String[] args, PrintStream out, PrintStream err) {
        boolean client = which.equals("echo-client");
        return CliArgs.run(which, args, out, err, a -> {
            if (client ? a.length != 1 : a.length != 0) {
                throw new IllegalArgumentException(client ? "give the server's address" : "no arguments are taken");
            }
            return a;
        }, s -> s.println("usage: rdma-bench " + which + (client ? " HOST" : "")
                + "   (RDMA_TRANSPORT=iwarp|rocev2|ib or RDMA_DEVICE=NAME pick the device)"), a -> {
            if (client) {
                EchoClient.main(a);
            } else {
                EchoServer.main(a);
            }
            return CliArgs.OK;
        });
    }
}
