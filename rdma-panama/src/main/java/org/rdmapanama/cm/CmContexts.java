package org.rdmapanama.cm;

import org.rdmapanama.error.NoSuchDeviceException;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.internal.Bridge;
import org.rdmapanama.internal.Cm;
import org.rdmapanama.internal.Verbs;
import org.rdmapanama.internal.VerbsObjects;
import org.rdmapanama.verbs.DeviceContext;
import org.rdmapanama.verbs.NativeResource;
import org.rdmapanama.verbs.ProtectionDomain;
import org.rdmapanama.verbs.QueuePair;
import org.rdmapanama.verbs.QueuePairConfig;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * librdmacm's own device contexts, the ones its cm_ids use. rdma_create_qp
 * refuses a PD of any other context, so a PD, CQ or SRQ that connections
 * share ({@link SharedResources}) is made on one of these, before any
 * connection exists.
 */
public final class CmContexts {
    // Initializes NativeResource, which registers the verbs bridge (see CmId).
    private static final Duration BRIDGE = NativeResource.DEFAULT_CALL_WAIT;

    /** The contexts open through {@link #open}, to their {@code ibv_context}: compared with a cm_id's. */
    private static final Map<DeviceContext, MemorySegment> OPEN = new ConcurrentHashMap<>();

    private CmContexts() {}

    /**
     * librdmacm's context for {@code deviceName} ({@code rdma_get_devices}).
     * Closing the wrapper closes what was made on it (PDs, CQs, ...), not
     * librdmacm's context, which stays open for the life of the process.
     * No reference to the device is kept: librdmacm frees its own PD of a
     * device only when a cm_id's release drops the device's count to zero,
     * so a count held here and dropped last would leave that PD behind. A
     * device hot-removed while no cm_id uses it may therefore lose its
     * context under this wrapper: close what was made on it once
     * DEVICE_REMOVAL is reported.
     *
     * @throws NoSuchDeviceException if librdmacm has no such device; the message lists those it has
     */
    public static DeviceContext open(String deviceName) throws RdmaException {
        MemorySegment list;
        try {
            list = Cm.getDevices();
        } catch (RdmaException e) {
            throw new NoSuchDeviceException("no RDMA device named '" + deviceName + "': rdma_get_devices found none ("
                    + e.getMessage() + ")");
        }
        MemorySegment found = MemorySegment.NULL;
        List<String> names = new ArrayList<>();
        try {
            for (int i = 0; found.equals(MemorySegment.NULL); i++) {
                MemorySegment ctx = Cm.deviceAt(list, i);
                if (ctx.equals(MemorySegment.NULL)) {
                    break;
                }
                String name = Verbs.deviceName(MemorySegment.ofAddress(VerbsObjects.deviceOf(ctx)));
                names.add(name);
                if (name.equals(deviceName)) {
                    found = ctx;
                }
            }
        } finally {
            Cm.freeDevices(list);
        }
        if (found.equals(MemorySegment.NULL)) {
            throw new NoSuchDeviceException("no RDMA device named '" + deviceName + "'; librdmacm's devices: "
                    + (names.isEmpty() ? "none" : String.join(", ", names)));
        }
        Bridge.Verbs<DeviceContext, ProtectionDomain, QueuePair, QueuePairConfig> verbs = Bridge.verbs();
        DeviceContext[] made = new DeviceContext[1];
        made[0] = verbs.borrowContext(found, raw -> OPEN.remove(made[0]));
        OPEN.put(made[0], found);
        return made[0];
    }

    /** The {@code ibv_context} of a context from {@link #open} that is still open, else null. */
    static MemorySegment handleOf(DeviceContext context) {
        return OPEN.get(context);
    }
}
