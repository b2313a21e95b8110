package org.rdmapanama.cm;

import org.rdmapanama.NativeResource;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.ffi.rdma_cm_event;
import org.rdmapanama.ffi.rdma_conn_param;
import org.rdmapanama.ffi.rdma_event_channel;
import org.rdmapanama.internal.Cm;
import org.rdmapanama.internal.Errno;
import org.rdmapanama.internal.Posix;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * {@code struct rdma_event_channel}: where a cm_id's events arrive. Waiting
 * polls the non-blocking fd in slices of at most 100 ms, so a timeout always
 * ends the wait, a virtual thread is never pinned for long, and closing the
 * channel from another thread is noticed.
 */
final class EventChannel extends NativeResource {
    private final int fd;

    private EventChannel(Native channel) throws RdmaException {
        super("rdma_cm event channel", channel, null);
        this.fd = rdma_event_channel.fd(handle());
        Posix.setNonBlocking(fd, description()); // if it throws, own() destroys the channel
    }

    static EventChannel create() throws RdmaException {
        org.rdmapanama.internal.NativeLibraries.require();
        return own(Cm.CREATE_EVENT_CHANNEL.pointer(""), rdma_event_channel.sizeof(),
                Cm::destroyEventChannel, EventChannel::new);
    }

    MemorySegment channel() {
        return handle();
    }

    /** The next event, copied and acked, or null when {@code timeout} passes first. */
    CmEvent next(Duration timeout) throws RdmaException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        try (Arena call = Arena.ofConfined()) {
            MemorySegment out = call.allocate(ADDRESS);
            // A zero (or spent) timeout still checks once, without waiting.
            while (Posix.awaitReadable(fd, deadline, description(), this::checkOpen)) {
                int rc;
                try {
                    rc = Cm.GET_CM_EVENT.statusOrErrno(handle(), out);
                } catch (IllegalStateException e) {
                    throw translate(e);
                }
                if (rc == -Errno.EAGAIN) {
                    continue;
                }
                if (rc < 0) {
                    throw Errno.failure("rdma_get_cm_event", description(), rc);
                }
                MemorySegment ev = out.get(ADDRESS, 0).reinterpret(rdma_cm_event.sizeof());
                try {
                    return copy(ev);
                } finally {
                    Cm.ACK_CM_EVENT.status("", ev);
                }
            }
            return null;
        }
    }

    private static CmEvent copy(MemorySegment ev) {
        CmEventType type = CmEventType.of(rdma_cm_event.event(ev));
        MemorySegment conn = rdma_cm_event.param.conn(rdma_cm_event.param(ev));
        byte[] data = new byte[0];
        int responder = 0;
        int initiator = 0;
        // param is a union: conn is meaningful for these events only.
        if (type == CmEventType.CONNECT_REQUEST || type == CmEventType.ESTABLISHED
                || type == CmEventType.REJECTED || type == CmEventType.CONNECT_RESPONSE) {
            int len = Byte.toUnsignedInt(rdma_conn_param.private_data_len(conn));
            MemorySegment p = rdma_conn_param.private_data(conn);
            if (len > 0 && !p.equals(MemorySegment.NULL)) {
                data = p.reinterpret(len).toArray(JAVA_BYTE);
            }
            responder = Byte.toUnsignedInt(rdma_conn_param.responder_resources(conn));
            initiator = Byte.toUnsignedInt(rdma_conn_param.initiator_depth(conn));
        }
        return new CmEvent(type, rdma_cm_event.status(ev), rdma_cm_event.id(ev), data, responder, initiator);
    }

    @Override
    protected void destroy(MemorySegment raw) throws RdmaException {
        Cm.destroyEventChannel(raw);
    }
}
