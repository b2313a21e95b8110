package org.rdmapanama.verbs;

import org.rdmapanama.device.RdmaConfig;
import org.rdmapanama.device.RdmaDevices;
import org.rdmapanama.device.Selection;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.error.NoSuchDeviceException;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.testkit.FaultRig;
import org.rdmapanama.testkit.LabDevices;
import org.rdmapanama.testkit.LabPorts;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.rdmapanama.cm.ConnectionOptions;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.cm.RdmaListener;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Bad input, each refused with an error that names the problem. One row per
 * case: what is done, the exception type, and a fragment its message must
 * contain. Device objects are opened once (the RoCEv2 and the iWARP device
 * selection picks) and closed after.
 */
@Tag("device")
class BadInputDeviceTest {
    static DeviceContext rxe, siw;
    static ProtectionDomain pd;
    static CompletionQueue cq;
    static QueuePair qp;
    static MemoryRegion mr;

    @BeforeAll
    static void open() throws Exception {
        rxe = LabDevices.open(Transport.ROCE_V2);
        siw = LabDevices.open(Transport.IWARP);
        pd = rxe.allocateProtectionDomain();
        cq = rxe.createCompletionQueue(16);
        qp = pd.createQueuePair(QueuePairConfig.rc(cq).withInline(64));
        mr = pd.allocate(4096, Access.REMOTE_WRITE);
    }

    @AfterAll
    static void close() throws Exception {
        if (rxe != null) {
            rxe.close();
        }
        if (siw != null) {
            siw.close();
        }
    }

    static Arguments bad(String what, Class<? extends Throwable> type, String fragment, Executable action) {
        return Arguments.of(what, type, fragment, action);
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                // devices, transports, ports, GIDs
                bad("unknown device", RdmaException.class, "no RDMA device named 'mlx5_99'",
                        () -> DeviceContext.open("mlx5_99").close()),
                bad("unknown transport", IllegalArgumentException.class, "unknown transport 'carrier-pigeon'",
                        () -> RdmaConfig.any().withTransport("carrier-pigeon")),
                bad("transport no device has", NoSuchDeviceException.class, "not InfiniBand",
                        () -> Selection.select(RdmaConfig.of("ib", null), RdmaDevices.list())),
                bad("port 0 in the configuration", IllegalArgumentException.class, "port numbers start at 1, got 0",
                        () -> RdmaConfig.any().withPort(0)),
                bad("port the device lacks (configuration)", NoSuchDeviceException.class, "has no port 2 (ports 1..1)",
                        () -> Selection.select(RdmaConfig.any().withDevice(LabDevices.ROCE).withPort(2), RdmaDevices.list())),
                bad("port the device lacks (QP)", IllegalArgumentException.class, LabDevices.ROCE + " has no port 2; its ports are 1..1",
                        () -> qp.toInit(2)),
                bad("negative GID index", IllegalArgumentException.class, "gid must be auto, auto-ipv6 or an index >= 0, got '-1'",
                        () -> RdmaConfig.any().withGid("-1")),
                bad("GID index past the table", NoSuchDeviceException.class, "no RDMA device matches",
                        () -> Selection.select(RdmaConfig.any().withDevice(LabDevices.ROCE).withGid("5000"), RdmaDevices.list())),
                bad("GID index past the table (QP, INIT -> RTR)", RdmaException.class, "INIT -> RTR",
                        BadInputDeviceTest::rtrWithGidIndex5000),
                bad("path MTU that does not exist", IllegalArgumentException.class, "path MTU must be 256, 512, 1024, 2048 or 4096",
                        () -> qp.toRtr(new QpAddress(0, 1, 1, new byte[16]), 1, 1, 1000)),
                // sizes
                bad("MR of 0 bytes", IllegalArgumentException.class, "memory region size must be positive, got 0",
                        () -> pd.allocate(0)),
                bad("registering an empty segment", IllegalArgumentException.class, "cannot register an empty segment",
                        () -> pd.register(MemorySegment.ofAddress(4096).reinterpret(0))),
                bad("registering unmapped memory", RdmaException.class, "ibv_reg_mr",
                        () -> pd.register(MemorySegment.ofAddress(4096).reinterpret(1 << 20)).close()),
                bad("SGE larger than its MR", IndexOutOfBoundsException.class, "outside the",
                        () -> qp.newSendRequest(1, 1).sge(mr, 0, 4097)),
                bad("SGE at a negative offset", IndexOutOfBoundsException.class, "outside the",
                        () -> qp.newSendRequest(1, 1).sge(mr, -1, 16)),
                bad("remote range past the peer's buffer", IndexOutOfBoundsException.class, "outside the peer's 4096-byte buffer",
                        () -> mr.remote().at(4000, 200)),
                bad("CQ of 0 entries", IllegalArgumentException.class, "CQ size 0 out of range",
                        () -> rxe.createCompletionQueue(0)),
                bad("CQ above max_cqe", IllegalArgumentException.class, "(max_cqe)",
                        () -> rxe.createCompletionQueue(Integer.MAX_VALUE)),
                bad("QP depth 0", IllegalArgumentException.class, "send queue depth must be at least 1, got 0",
                        () -> QueuePairConfig.rc(cq).withQueueDepth(0, 1)),
                bad("QP depth above max_qp_wr", IllegalArgumentException.class, "exceeds " + LabDevices.ROCE + "'s max_qp_wr",
                        () -> pd.createQueuePair(QueuePairConfig.rc(cq).withQueueDepth(1 << 30, 1))),
                bad("SGEs above max_sge (siw)", IllegalArgumentException.class, "exceeds " + LabDevices.IWARP + "'s max_sge",
                        BadInputDeviceTest::siwQpWith64Sges),
                // inline
                bad("inline size above what the device grants", RdmaException.class, "ibv_create_qp",
                        () -> pd.createQueuePair(QueuePairConfig.rc(cq).withInline(1 << 20)).close()),
                bad("inline send above the QP's max_inline_data", IllegalArgumentException.class, "max_inline_data",
                        () -> qp.newSendRequest(1, 1).sge(mr, 0, 4096).inline(0, true)),
                bad("negative inline size", IllegalArgumentException.class, "inline data size must be 0..1048576, got -1",
                        () -> QueuePairConfig.rc(cq).withInline(-1)),
                // connection options
                bad("rnr retry count 8", IllegalArgumentException.class, "rnrRetryCount must be 0..7, got 8",
                        () -> ConnectionOptions.defaults().withRnrRetry(8)),
                bad("negative connection depth", IllegalArgumentException.class, "send queue depth must be at least 1, got -1",
                        () -> ConnectionOptions.defaults().withDepth(-1, 1)),
                bad("listener backlog 0", IllegalArgumentException.class, "backlog must be at least 1, got 0",
                        () -> RdmaListener.bind(new InetSocketAddress(FaultRig.addressOf(Transport.ROCE_V2), LabPorts.next()), 0,
                                ConnectionOptions.defaults())),
                // what a peer sends
                bad("short private data (remote buffer)", IllegalArgumentException.class,
                        "a remote buffer description has 16 bytes, the peer sent 5",
                        () -> RemoteBuffer.fromBytes(new byte[5])),
                bad("empty private data (remote buffer)", IllegalArgumentException.class, "the peer sent 0",
                        () -> RemoteBuffer.fromBytes(new byte[0])),
                bad("oversized private data (accept side, RoCE)", IllegalArgumentException.class,
                        "private data of 250 bytes exceeds the 196-byte limit for accept",
                        BadInputDeviceTest::acceptWithOversizedPrivateData),
                // closed objects used again
                bad("closed QP posted to", ClosedResourceException.class, "is closed", BadInputDeviceTest::postOnClosedQp),
                bad("closed PD allocating", ClosedResourceException.class, "ProtectionDomain on " + LabDevices.IWARP + " is closed",
                        BadInputDeviceTest::allocateOnClosedPd),
                bad("closed CQ polled", ClosedResourceException.class, "CompletionQueue on " + LabDevices.ROCE + " is closed",
                        BadInputDeviceTest::pollClosedCq),
                bad("closed connection connected again", IllegalStateException.class, "cannot connect",
                        BadInputDeviceTest::connectClosedConnection),
                bad("closed listener accepting", ClosedResourceException.class, "closed",
                        BadInputDeviceTest::acceptOnClosedListener));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void isRefusedWithAClearMessage(String what, Class<? extends Throwable> type, String fragment, Executable action) {
        Throwable e = assertThrows(type, action, what);
        System.out.println("BAD-INPUT " + what + " | " + e.getClass().getSimpleName() + ": " + e.getMessage());
        assertTrue(e.getMessage() != null && e.getMessage().contains(fragment),
                what + ": expected '" + fragment + "' in: " + e.getMessage());
    }

    static void rtrWithGidIndex5000() throws Exception {
        QueuePair q = pd.createQueuePair(QueuePairConfig.rc(cq));
        try {
            q.toInit(1);
            q.toRtr(new QpAddress(0, qp.qpNumber(), 1, rxe.device().port(1).gids().getFirst().raw()), 1, 5000, 1024);
        } finally {
            q.close();
        }
    }

    static void siwQpWith64Sges() throws Exception {
        try (DeviceContext ctx = LabDevices.open(LabDevices.IWARP)) {
            CompletionQueue c = ctx.createCompletionQueue(4);
            ctx.allocateProtectionDomain().createQueuePair(QueuePairConfig.rc(c).withSge(64, 1));
        }
    }

    static void postOnClosedQp() throws Exception {
        QueuePair q = pd.createQueuePair(QueuePairConfig.rc(cq));
        SendRequest wr = q.newSendRequest(1, 1).sge(mr, 0, 8);
        q.close();
        try {
            q.postSend(wr);
        } finally {
            wr.close();
        }
    }

    static void allocateOnClosedPd() throws Exception {
        ProtectionDomain p = siw.allocateProtectionDomain();
        p.close();
        p.allocate(64);
    }

    static void pollClosedCq() throws Exception {
        CompletionQueue c = rxe.createCompletionQueue(4);
        c.close();
        try (CompletionBatch b = new CompletionBatch(1)) {
            c.poll(b);
        }
    }

    static void connectClosedConnection() throws Exception {
        InetSocketAddress where = new InetSocketAddress(FaultRig.addressOf(Transport.IWARP), LabPorts.next());
        try (RdmaListener l = RdmaListener.bind(where, 1, ConnectionOptions.defaults())) {
            RdmaConnection c = RdmaConnection.resolve(where, null, ConnectionOptions.defaults(), FaultRig.T);
            c.close();
            c.connect(new byte[0], FaultRig.T);
        }
    }

    static void acceptWithOversizedPrivateData() throws Exception {
        try (FaultRig.CmPair p = FaultRig.cmPair(Transport.ROCE_V2, ConnectionOptions.defaults(), 64)) {
            // a second request to the same listener, to have one in the REQUESTED state
            InetSocketAddress where = p.listener().address();
            var pending = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try (RdmaConnection c = RdmaConnection.resolve(where, null, ConnectionOptions.defaults(), FaultRig.T)) {
                    c.connect(new byte[0], java.time.Duration.ofSeconds(20));
                    return "connected";
                } catch (Exception e) {
                    return e.getMessage();
                }
            });
            try (RdmaConnection req = p.listener().accept(FaultRig.T)) {
                try {
                    req.accept(new byte[250], FaultRig.T);
                } finally {
                    req.reject(new byte[0]);
                    System.out.println("BAD-INPUT the rejected client saw: " + pending.get(60, java.util.concurrent.TimeUnit.SECONDS));
                }
            }
        }
    }

    static void acceptOnClosedListener() throws Exception {
        RdmaListener l = RdmaListener.bind(new InetSocketAddress(FaultRig.addressOf(Transport.ROCE_V2), LabPorts.next()), 1,
                ConnectionOptions.defaults());
        l.close();
        l.accept(java.time.Duration.ofSeconds(1));
    }
}
