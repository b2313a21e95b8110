package org.rdmapanama.verbs;

import org.rdmapanama.device.DeviceCapabilities;
import org.rdmapanama.device.RdmaConfig;
import org.rdmapanama.device.RdmaDevice;
import org.rdmapanama.device.RdmaDevices;
import org.rdmapanama.device.Selection;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.NoSuchDeviceException;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.internal.DeviceQuery;
import org.rdmapanama.internal.Verbs;
import org.rdmapanama.internal.VerbsObjects;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.stream.Collectors;

import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * An open device ({@code struct ibv_context}): the root that protection
 * domains, completion channels and completion queues hang off. Thread-safe;
 * closing it closes everything created from it, newest first.
 */
public final class DeviceContext extends NativeResource {
    private final RdmaDevice device;
    // The inline verbs' function pointers, read once (see internal.DataPath).
    final MemorySegment pollCqFn;
    final MemorySegment reqNotifyCqFn;
    final MemorySegment postSendFn;
    final MemorySegment postRecvFn;
    final MemorySegment postSrqRecvFn;

    private final boolean owned;
    private final AsyncEventWatcher events;

    private DeviceContext(Native ctx, RdmaDevice device, boolean owned) throws RdmaException {
        super("DeviceContext " + device.name(), ctx, null);
        this.device = device;
        this.owned = owned;
        this.pollCqFn = VerbsObjects.pollCqFn(ctx.struct());
        this.reqNotifyCqFn = VerbsObjects.reqNotifyCqFn(ctx.struct());
        this.postSendFn = VerbsObjects.postSendFn(ctx.struct());
        this.postRecvFn = VerbsObjects.postRecvFn(ctx.struct());
        this.postSrqRecvFn = VerbsObjects.postSrqRecvFn(ctx.struct());
        this.events = AsyncEventWatcher.acquire(ctx.struct(), device.name(), !owned); // unscoped: it may outlive this wrapper
    }

    AsyncEventWatcher events() {
        return events;
    }

    /**
     * Opens the device called {@code name} ({@code ibv_open_device}).
     *
     * @throws RdmaException naming the device and listing those that exist, if there is no such device
     */
    public static DeviceContext open(String name) throws RdmaException {
        try (Arena scratch = Arena.ofConfined()) {
            MemorySegment count = scratch.allocate(JAVA_INT);
            MemorySegment list = Verbs.getDeviceList(count);
            MemorySegment ctx = MemorySegment.NULL;
            try {
                MemorySegment dev = list.equals(MemorySegment.NULL) ? MemorySegment.NULL
                        : DeviceQuery.find(list, count.get(JAVA_INT, 0), name);
                if (dev.equals(MemorySegment.NULL)) {
                    throw new RdmaException("no RDMA device named '" + name + "'; " + describeAll());
                }
                ctx = Verbs.openDevice(dev, name);
                RdmaDevice info = RdmaDevices.describe(ctx);
                MemorySegment opened = ctx;
                ctx = MemorySegment.NULL; // own() closes it if wrapping fails
                return ownGuarded(opened, VerbsObjects.CONTEXT_SIZE, raw -> Verbs.closeDevice(raw, name),
                        n -> new DeviceContext(n, info, true));
            } finally {
                if (!ctx.equals(MemorySegment.NULL)) {
                    Verbs.closeDevice(ctx, name);
                }
                Verbs.freeDeviceList(list);
            }
        }
    }

    /**
     * Opens what the configuration (system properties, environment, config
     * file: see {@link RdmaConfig}) selects.
     */
    public static DeviceContext open(RdmaConfig config) throws RdmaException {
        Selection selection = Selection.select(config, RdmaDevices.list());
        DeviceContext ctx = open(selection.device().name());
        ctx.selection = selection;
        return ctx;
    }

    /** The port and GID picked when opened from a configuration; for {@link #open(String)}, the first active port. */
    public Selection selection() throws NoSuchDeviceException {
        Selection s = selection;
        if (s == null) {
            s = Selection.select(RdmaConfig.any().withDevice(device.name()), java.util.List.of(device));
            selection = s;
        }
        return s;
    }

    private volatile Selection selection;

    static String describeAll() {
        try {
            List<RdmaDevice> all = RdmaDevices.list();
            return all.isEmpty() ? "there are no RDMA devices"
                    : "devices: " + all.stream().map(d -> d.name() + " (" + d.transport().displayName() + ")")
                    .collect(Collectors.joining(", "));
        } catch (RdmaException e) {
            return "listing devices failed too: " + e.getMessage();
        }
    }

    /** The device as it was when opened: name, transport, limits, ports, GIDs. */
    public RdmaDevice device() {
        return device;
    }

    public Transport transport() {
        return device.transport();
    }

    public DeviceCapabilities capabilities() {
        return device.capabilities();
    }

    /** {@code ibv_alloc_pd}. */
    public ProtectionDomain allocateProtectionDomain() throws RdmaException {
        checkOpen();
        return ownChild(ctx -> Verbs.Calls.ALLOC_PD.pointer(device.name(), ctx), VerbsObjects.PD_SIZE,
                raw -> Verbs.Calls.DEALLOC_PD.status(device.name(), raw), n -> new ProtectionDomain(this, n), true);
    }

    /** {@code ibv_create_comp_channel}, for event-driven completion handling. */
    public CompletionChannel createCompletionChannel() throws RdmaException {
        checkOpen();
        return ownChild(ctx -> Verbs.Calls.CREATE_COMP_CHANNEL.pointer(device.name(), ctx), VerbsObjects.COMP_CHANNEL_SIZE,
                raw -> Verbs.Calls.DESTROY_COMP_CHANNEL.status(device.name(), raw), n -> new CompletionChannel(this, n),
                false);
    }

    /** {@code ibv_create_cq} with room for at least {@code entries} completions, polled only. */
    public CompletionQueue createCompletionQueue(int entries) throws RdmaException {
        return createCompletionQueue(entries, null);
    }

    /**
     * {@code ibv_create_cq}; with a channel, {@link CompletionQueue#requestNotification} and
     * {@link CompletionChannel#await} wait for completions instead of spinning.
     */
    public CompletionQueue createCompletionQueue(int entries, CompletionChannel channel) throws RdmaException {
        checkOpen();
        int max = device.capabilities().maxCqe();
        if (entries < 1 || entries > max) {
            throw new IllegalArgumentException("CQ size " + entries + " out of range: " + device.name()
                    + " allows 1.." + max + " entries (max_cqe)");
        }
        return CompletionQueue.create(this, entries, channel);
    }

    /**
     * Wraps a context librdmacm opened and owns (a cm_id's {@code verbs}):
     * closing the wrapper closes what was created on it, not the context.
     * The caller closes the wrapper before it destroys the cm_id it took the
     * context from: after a hot removal, destroying a device's last cm_id
     * closes the context, and the wrapper's close waits for calls still on it.
     */
    static DeviceContext borrow(MemorySegment ctx) throws RdmaException {
        return borrow(ctx, raw -> { }); // librdmacm's
    }

    /** {@link #borrow(MemorySegment)}, running {@code release} once closed (or if wrapping fails). */
    static DeviceContext borrow(MemorySegment ctx, Freer release) throws RdmaException {
        RdmaDevice info;
        try {
            info = describeBorrowed(ctx);
        } catch (RdmaException | RuntimeException e) {
            release.free(ctx);
            throw e;
        }
        return ownGuarded(ctx, VerbsObjects.CONTEXT_SIZE, release, n -> new DeviceContext(n, info, false));
    }

    /**
     * A borrowed context's description, the struct ibv_device it was of, and
     * the context's event watcher with its count of port events when it was taken.
     */
    private record Described(long device, RdmaDevice info, AsyncEventWatcher watcher, long portEvents) {}

    /**
     * librdmacm opens one context per device and hands it to every cm_id, so
     * each connection would describe the same device again: a device query,
     * the GID table and each port, a good part of a connection's set-up under
     * emulation. The capabilities and GIDs are reused while the context's
     * event watcher has read no port or device event since they were taken
     * (the kernel reports a GID table that follows an address change,
     * IBV_EVENT_GID_CHANGE, and a port going up or down); the ports' state,
     * LID and MTUs are queried on every borrow, since an MTU change raises no
     * event. A context seen for the first time has no watcher yet, so its first
     * two connections describe it whole. One entry per context ever borrowed.
     */
    private static final java.util.concurrent.ConcurrentHashMap<Long, Described> BORROWED =
            new java.util.concurrent.ConcurrentHashMap<>();

    private static RdmaDevice describeBorrowed(MemorySegment ctx) throws RdmaException {
        long device = VerbsObjects.deviceOf(ctx);
        AsyncEventWatcher watcher = AsyncEventWatcher.current(ctx.address());
        long events = watcher == null ? -1 : watcher.portEvents(); // read before describing: a later event invalidates
        Described d = BORROWED.get(ctx.address());
        if (d != null && watcher != null && d.watcher() == watcher && d.device() == device && d.portEvents() == events) {
            return RdmaDevices.withPortsQueried(d.info(), ctx);
        }
        RdmaDevice info = RdmaDevices.describe(ctx);
        BORROWED.put(ctx.address(), new Described(device, info, watcher, events));
        return info;
    }

    @Override
    void destroy(MemorySegment raw) throws RdmaException {
        events.release(); // before the close: the watcher must not read a closed context
        if (owned) {
            Verbs.closeDevice(raw, device.name());
        }
    }
}
