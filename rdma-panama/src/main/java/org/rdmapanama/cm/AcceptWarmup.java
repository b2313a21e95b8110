package org.rdmapanama.cm;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.internal.Bridge;
import org.rdmapanama.internal.Cm;
import org.rdmapanama.internal.CmStructs;
import org.rdmapanama.verbs.CompletionQueue;
import org.rdmapanama.verbs.DeviceContext;
import org.rdmapanama.verbs.ProtectionDomain;
import org.rdmapanama.verbs.QueuePair;
import org.rdmapanama.verbs.QueuePairConfig;
import org.slf4j.LoggerFactory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * What {@link RdmaListener#bind} does so that its first accept is as quick as
 * later ones. In a fresh JVM the first request otherwise also pays for linking
 * the downcalls, initializing the classes and describing the device, and an
 * iWARP peer may give up meanwhile (its connect fails with UNREACHABLE, our
 * rdma_accept with ECONNRESET). Best effort: what fails here, accept does later.
 */
final class AcceptWarmup {
    private AcceptWarmup() {}

    static void prepare(CmId listener, ConnectionOptions options) {
        try {
            Cm.linkAccept();
            try (Arena a = Arena.ofConfined()) {
                CmStructs.connParam(a, new byte[1], options.rdmaReadDepth(), options.rdmaReadDepth(),
                        options.retryCount(), options.rnrRetryCount());
            }
            listener.withVerbs(AcceptWarmup::connectionObjectsOnce);
        } catch (RdmaException | RuntimeException e) {
            LoggerFactory.getLogger(RdmaListener.class).debug("readying accept on {}: {}", listener, e.getMessage());
        }
    }

    /**
     * The objects of a connection, made and freed once on the listener's device (none
     * for a wildcard address): the device's description stays cached for the borrows
     * to come, and the classes and links of PD, CQ and QP stay.
     */
    private static Void connectionObjectsOnce(MemorySegment verbs) throws RdmaException {
        if (verbs.equals(MemorySegment.NULL)) {
            return null;
        }
        Bridge.Verbs<DeviceContext, ProtectionDomain, QueuePair, QueuePairConfig> bridge = Bridge.verbs();
        try (DeviceContext ctx = bridge.borrowContext(verbs)) { // librdmacm's: closing frees what was made on it
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            CompletionQueue cq = ctx.createCompletionQueue(16);
            pd.createQueuePair(QueuePairConfig.rc(cq)).toError();
            PrivateData.check(ctx.transport(), new byte[0], false);
        }
        return null;
    }
}
