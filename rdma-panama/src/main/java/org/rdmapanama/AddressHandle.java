package org.rdmapanama;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.ffi.ibv_ah;
import org.rdmapanama.ffi.ibv_ah_attr;
import org.rdmapanama.internal.Verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** {@code struct ibv_ah}: the route to a UD peer, used in {@link SendRequest#ud}. */
public final class AddressHandle extends NativeResource {
    private AddressHandle(ProtectionDomain pd, MemorySegment ah) {
        super("AddressHandle on " + pd.context().device().name(), ah, ibv_ah.sizeof(), pd);
    }

    /**
     * {@code ibv_create_ah} toward {@code remote} from {@code port}; with
     * {@code gidIndex >= 0} the packets carry a GRH (required on RoCE).
     */
    public static AddressHandle create(ProtectionDomain pd, QpAddress remote, int port, int gidIndex)
            throws RdmaException {
        if (!pd.context().transport().supportsUd()) {
            throw new TransportCapabilityException("address handles are for UD, which iWARP lacks");
        }
        try (Arena scratch = Arena.ofConfined()) {
            MemorySegment attr = scratch.allocate(ibv_ah_attr.layout());
            QueuePair.fillAddress(attr, remote, port, gidIndex);
            return new AddressHandle(pd, Verbs.Calls.CREATE_AH.pointer(remote.toString(), pd.pd(), attr));
        }
    }

    MemorySegment ah() {
        return handle();
    }

    @Override
    protected void destroy(MemorySegment raw) throws RdmaException {
        Verbs.Calls.DESTROY_AH.status(description(), raw);
    }
}
