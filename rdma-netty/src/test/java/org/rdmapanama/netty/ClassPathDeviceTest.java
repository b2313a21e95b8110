package org.rdmapanama.netty;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.rdmapanama.channel.ChannelGroup;
import org.rdmapanama.channel.ChannelOptions;
import org.rdmapanama.channel.ChannelServer;
import org.rdmapanama.channel.Message;
import org.rdmapanama.channel.MessageBuffer;
import org.rdmapanama.channel.MessageChannel;
import org.rdmapanama.device.Transport;
import org.rdmapanama.testkit.LabDevices;
import org.rdmapanama.testkit.LabPorts;
import org.rdmapanama.testkit.LeakCheck;
import org.rdmapanama.testkit.OnEveryLabTransport;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * rdma-panama as Netty and gRPC users run it: from the class path, in the
 * unnamed module, with {@code --enable-native-access=ALL-UNNAMED} (scripts/test
 * runs rdma-netty's device tests in a JVM of their own for this). Two channel
 * groups on each lab transport echo messages on both sides of the eager limit,
 * every byte checked; closing them must free every kernel RDMA object.
 */
@Tag("device")
class ClassPathDeviceTest {
    static final int SECONDS = 30;

    /** On the module path the runtime and bindings would be named modules and this test would prove nothing. */
    @BeforeAll
    static void runsFromTheClassPath() {
        Module runtime = ChannelGroup.class.getModule();
        assertFalse(runtime.isNamed(), "rdma-panama is in module " + runtime.getName() + ", not on the class path");
        assertTrue(runtime.isNativeAccessEnabled(), "no native access for the unnamed module");
    }

    static byte[] pattern(int size, int seed) {
        byte[] b = new byte[size];
        for (int i = 0; i < size; i++) {
            b[i] = (byte) (i * 31 + seed);
        }
        return b;
    }

    static void echo(MessageChannel ch, Message m) throws Exception {
        MessageBuffer reply = ch.allocate(m.length());
        MemorySegment.copy(m.segment(), 0, reply.segment(), 0, m.length());
        ch.send(reply, m.length());
        m.release();
    }

    /**
     * The counts once two readings a second apart agree (at most 10 s): the kernel
     * frees a process's objects some time after it ends (rxe's QP cleanup lags),
     * and in scripts/test the module-path JVM ends just before this one. The idle
     * lab is not at zero: the kernel holds a PD, CQ and QP of its own.
     */
    static Map<String, Integer> settledCounts() throws Exception {
        Map<String, Integer> last = LeakCheck.counts();
        for (int i = 0; i < 10; i++) {
            Thread.sleep(1000);
            Map<String, Integer> now = LeakCheck.counts();
            if (now.equals(last)) {
                break;
            }
            last = now;
        }
        return last;
    }

    @OnEveryLabTransport
    void echoesAcrossTheEagerLimitThenFreesEverything(Transport t) throws Exception {
        Map<String, Integer> before = settledCounts();
        ChannelOptions o = ChannelOptions.defaults();
        int port = LabPorts.next();
        try (ChannelGroup server = ChannelGroup.open(LabDevices.config(t), o);
             ChannelServer s = server.listen(port, ClassPathDeviceTest::echo);
             ChannelGroup client = ChannelGroup.open(LabDevices.config(t), o)) {
            BlockingQueue<byte[]> replies = new ArrayBlockingQueue<>(8);
            MessageChannel ch = client.connect(new InetSocketAddress(server.address(), port), (c, m) -> {
                replies.add(m.segment().asSlice(0, m.length()).toArray(JAVA_BYTE));
                m.release();
            }).get(SECONDS, TimeUnit.SECONDS);
            // The leak check must see this test's objects, or its final comparison proves nothing.
            Map<String, Integer> open = LeakCheck.counts();
            assertTrue(open.get("qp") >= before.get("qp") + 2, "rdma res show with two channel ends open: " + open);
            int[] sizes = {1, o.eagerLimit() - 1, o.eagerLimit(), o.eagerLimit() + 1, 4 * o.eagerLimit() + 3};
            for (int size : sizes) {
                byte[] request = pattern(size, size);
                MessageBuffer b = ch.allocate(size);
                MemorySegment.copy(request, 0, b.segment(), JAVA_BYTE, 0, size);
                ch.send(b, size);
                assertArrayEquals(request, replies.poll(SECONDS, TimeUnit.SECONDS), size + " B over " + t);
            }
            ch.close();
            ch.closeFuture().get(SECONDS, TimeUnit.SECONDS);
        }
        assertEquals(before, LeakCheck.awaitCounts(before), "kernel RDMA objects left over on " + t);
    }
}
