package org.rdmapanama.verbs;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.error.TransportCapabilityException;
import org.rdmapanama.internal.QpAttributes;
import org.rdmapanama.internal.Verbs;
import org.rdmapanama.internal.VerbsObjects;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** {@code struct ibv_ah}: the route to a UD peer, used in {@link SendRequest#ud}. */
public final class AddressHandle extends NativeResource {
    private final ProtectionDomain pd;

    private AddressHandle(ProtectionDomain pd, Native ah, QpAddress remote) {
        super("AddressHandle to " + remote + " on " + pd.context().device().name(), ah, pd);
        this.pd = pd;
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
            MemorySegment attr = QpAttributes.allocateAddress(scratch);
            QpTransition.fillAddress(attr, remote, port, gidIndex);
            pd.checkOpen();
            return pd.ownChild(h -> Verbs.Calls.CREATE_AH.pointer(remote.toString(), h, attr), VerbsObjects.AH_SIZE,
                    raw -> Verbs.Calls.DESTROY_AH.status(remote.toString(), raw), n -> new AddressHandle(pd, n, remote),
                    false);
        }
    }

    MemorySegment ah() {
        return handle();
    }

    ProtectionDomain protectionDomain() {
        return pd;
    }

    /** A send request's WR now points at this AH: refuse to close until it no longer does. */
    void hold(Object wr) {
        addUser(wr);
    }

    void release(Object wr) {
        removeUser(wr);
    }

    @Override
    void destroy(MemorySegment raw) throws RdmaException {
        Verbs.Calls.DESTROY_AH.status(description(), raw);
    }
}
