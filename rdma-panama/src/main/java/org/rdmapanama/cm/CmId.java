package org.rdmapanama.cm;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.internal.Cm;
import org.rdmapanama.internal.CmStructs;
import org.rdmapanama.internal.NativeCall;
import org.rdmapanama.internal.Ownership;
import org.rdmapanama.internal.ResourceLifecycle;
import org.rdmapanama.verbs.NativeResource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * {@code struct rdma_cm_id}, destroyed with {@code rdma_destroy_id}. Guarded
 * (see {@link ResourceLifecycle}): every call and read runs between
 * {@code enter()} and {@code leave()}, and its close takes no arena handshake.
 */
final class CmId implements AutoCloseable, ResourceLifecycle.Hooks {
    // Reading a verbs static initializes NativeResource, whose static initializer registers the
    // verbs bridge: every use of the bridge holds a cm_id, so it is registered by then, by no name.
    static final Duration CALL_WAIT = NativeResource.DEFAULT_CALL_WAIT;

    private final ResourceLifecycle life;
    private final MemorySegment key;

    private CmId(String description, Ownership.Pending id) {
        this.life = new ResourceLifecycle(description, id, null, this);
        this.key = MemorySegment.ofAddress(id.struct().address());
    }

    /** Owns {@code id} (a cm_id rdma_cm made, e.g. for a connect request): rdma_destroy_id frees it. */
    static CmId own(String description, MemorySegment id) throws RdmaException {
        return Ownership.own(id, CmStructs.CM_ID_SIZE, true, raw -> Cm.DESTROY_ID.status(description, raw),
                n -> new CmId(description, n));
    }

    static CmId create(EventChannel channel, String description) throws RdmaException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ADDRESS);
            Cm.CREATE_ID.status(description, channel.channel(), out, MemorySegment.NULL, CmStructs.PS_TCP);
            return own(description, out.get(ADDRESS, 0));
        }
    }

    /** The cm_id's address, which its events carry: the event loop's key, never dereferenced. */
    MemorySegment key() {
        return key;
    }

    /** {@code call} (an {@code rdma_*} call whose first argument is the cm_id); a close waits for it. */
    int status(NativeCall call, String what, Object... rest) throws RdmaException {
        return life.status(call, what, rest);
    }

    /** What {@link #withVerbs} runs. */
    @FunctionalInterface
    interface VerbsUse<R> {
        R use(MemorySegment verbs) throws RdmaException;
    }

    /**
     * Runs {@code use} with {@code id->verbs} while this cm_id is entered:
     * after a hot removal, destroying a device's last cm_id closes its
     * context, so the context is safe to use only while a cm_id is held.
     */
    <R> R withVerbs(VerbsUse<R> use) throws RdmaException {
        return life.withHandle(id -> use.use(CmStructs.idContext(id)));
    }

    /** {@code rdma_create_qp} with the PD's handle; returns {@code id->qp}. */
    MemorySegment createQp(MemorySegment pd, MemorySegment initAttr, String what) throws RdmaException {
        return life.withHandle(id -> {
            Cm.CREATE_QP.status(what, id, pd, initAttr);
            return CmStructs.idQp(id);
        });
    }

    /** {@code rdma_destroy_qp}, which also clears {@code id->qp}, which rdma_cm reads. */
    void destroyQp() throws RdmaException {
        life.withHandle(id -> {
            Cm.destroyQp(id);
            return null;
        });
    }

    /** A {@code struct sockaddr_in} or {@code sockaddr_in6} for {@code address}, in {@code arena}. */
    static MemorySegment sockaddr(Arena arena, InetSocketAddress address) {
        return CmStructs.sockaddr(arena, address);
    }

    /** The local or the peer address (with its port) that rdma_cm holds for this cm_id; null if none yet. */
    InetSocketAddress address(boolean local) throws RdmaException {
        return life.withHandle(id -> CmStructs.routeAddress(id, local));
    }

    /** {@code RDMA_OPTION_ID_ACK_TIMEOUT}, before connect or accept moves the QP to RTS; 0: leave rdma_cm's. */
    void ackTimeout(int timeout) throws RdmaException {
        if (timeout == 0) {
            return;
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment v = a.allocate(JAVA_BYTE);
            v.set(JAVA_BYTE, 0, (byte) timeout);
            status(Cm.SET_OPTION, "rdma_set_option(RDMA_OPTION_ID_ACK_TIMEOUT, " + timeout + ")",
                    Cm.OPTION_ID, Cm.OPTION_ID_ACK_TIMEOUT, v, 1L);
        }
    }

    static byte[] bytes(MemorySegment s) {
        return s.toArray(JAVA_BYTE);
    }

    String description() {
        return life.description();
    }

    boolean isClosed() {
        return life.isClosed();
    }

    @Override
    public void close() throws RdmaException {
        life.close(CALL_WAIT);
    }

    @Override
    public void destroy(MemorySegment raw) throws RdmaException {
        Cm.DESTROY_ID.status(life.description(), raw);
    }

    @Override
    public String toString() {
        return life.toString();
    }
}
