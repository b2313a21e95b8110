package org.rdmapanama.channel;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.ProtectionDomain;
import org.rdmapanama.verbs.ReceiveRequest;
import org.rdmapanama.verbs.SharedReceiveQueue;
import org.rdmapanama.verbs.WcStatus;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * One loop's shared receive queue, and the credit rules kept over it. Each
 * channel that joins is promised {@code window + 2} receives, as it would
 * post on a queue pair of its own; {@code need} is the sum of those promises
 * (plus slots still owed to channels that left), and the SRQ never holds
 * fewer slots than that, so every credit a peer has is backed by a posted
 * receive. A slot given back while the SRQ holds more than it needs is
 * retired to the pool instead of posted: so the SRQ shrinks as channels
 * leave. A completion names its slot in the work request id and its
 * channel by the QP number.
 * <p>
 * A channel that left keeps its share in {@code need} until the loop has
 * seen its CQ empty after the channel's QP was destroyed: only then has every
 * completion of that QP been polled (and its slot given back), and only then
 * may a new QP with the same number (siw reuses them at once) join.
 */
final class SharedReceives implements AutoCloseable {
    private static final byte FREE = 0;
    private static final byte POSTED = 1;
    private static final byte TAKEN = 2;
    private static final byte ORPHAN = 3; // held by the user after its channel finished
    private static final int BATCH = 64;
    private static final long JOIN_WAIT_NANOS = 5_000_000_000L;

    final SharedReceiveQueue queue;
    private final String name;
    private final BufferPool pool;
    private final int capacity;
    private final int slotSize;
    private final int eagerLimit;
    private final ReceiveRequest batch;

    // guarded by this
    private MessageBuffer[] slots = new MessageBuffer[0];
    private Message[] messages = new Message[0];
    private SrqReceives[] holder = new SrqReceives[0];
    private byte[] state = new byte[0];
    private int[] free = new int[0];
    private int freeCount;
    private int used; // slot indexes ever handed out
    private int owned; // slots with a buffer: posted, taken or orphaned
    private int need;
    private int members;
    private int[] leavingQps = new int[8];
    private int leavingQpCount;
    private int leaving; // shares of channels that left, not yet settled
    private final QpTable table = new QpTable();

    // loop thread only
    private int[] repostSlot = new int[BATCH];
    private SrqReceives[] repostCredit = new SrqReceives[BATCH];
    private int repostCount;

    SharedReceives(String name, ProtectionDomain pd, BufferPool pool, ChannelOptions options) throws RdmaException {
        var caps = pd.context().capabilities();
        String dev = pd.context().device().name();
        if (caps.maxSrq() == 0) {
            throw new RdmaException(dev + " has no shared receive queues (max_srq 0): use ChannelOptions"
                    + ".sharedReceives 0");
        }
        if (options.sharedReceives() > caps.maxSrqWr()) {
            throw new RdmaException("ChannelOptions.sharedReceives " + options.sharedReceives() + " is more than "
                    + dev + " allows in one shared receive queue (max_srq_wr " + caps.maxSrqWr() + ")");
        }
        this.name = name;
        this.pool = pool;
        this.capacity = options.sharedReceives();
        this.slotSize = options.slotSize();
        this.eagerLimit = options.eagerLimit();
        this.queue = pd.createSharedReceiveQueue(capacity, 1);
        this.batch = queue.newReceiveRequest(BATCH, 1);
    }

    static long wrId(int slot) {
        return (long) MessageChannel.KIND_SRQ << 32 | (slot & 0xffffffffL);
    }

    synchronized MemorySegment slot(int slot) {
        return slots[slot].whole;
    }

    synchronized Message message(int slot, MessageChannel channel) {
        Message m = messages[slot];
        m.channel = channel;
        return m;
    }

    /** Promises {@code r}'s receives: posts as many new slots as the promise needs beyond those posted. */
    synchronized void join(SrqReceives r, int qpNumber) throws RdmaException {
        if (need + r.receives > capacity) {
            throw new RdmaException(name + ": its shared receive queue holds " + capacity + " receives, " + need
                    + " are promised to " + members + " channels (and ones closing), and a channel needs "
                    + r.receives + " (window + 2); raise ChannelOptions.sharedReceives or loops");
        }
        long deadline = System.nanoTime() + JOIN_WAIT_NANOS;
        while (isLeaving(qpNumber)) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new RdmaException(name + ": QP " + qpNumber + " was reused while completions of its last"
                        + " owner may still be in the loop's CQ, and the loop did not settle them within 5 s");
            }
            try {
                wait(Math.max(1, left / 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new RdmaException(name + ": interrupted while joining its shared receive queue", e);
            }
        }
        while (owned < need + r.receives) {
            int s = freeCount > 0 ? free[--freeCount] : used++;
            ensure(used);
            MessageBuffer b;
            try {
                b = pool.allocate(eagerLimit);
            } catch (RdmaException | RuntimeException e) {
                free[freeCount++] = s;
                throw e;
            }
            slots[s] = b;
            messages[s] = new Message(null, s, b.payloadView());
            owned++;
            post(s);
        }
        need += r.receives;
        members++;
        table.put(qpNumber, r);
    }

    /** The channel finished, its QP destroyed (loop thread): what it took goes back, what the user holds stays. */
    synchronized void leave(SrqReceives r, int qpNumber) throws RdmaException {
        table.remove(qpNumber, r);
        members--;
        int held = 0;
        for (int s = 0; s < used; s++) {
            if (holder[s] == r) {
                holder[s] = null;
                if (messages[s].isHeld()) {
                    state[s] = ORPHAN;
                    held++;
                } else {
                    returnSlot(s);
                }
            }
        }
        leaving += r.receives - held;
        if (leavingQpCount == leavingQps.length) {
            leavingQps = Arrays.copyOf(leavingQps, 2 * leavingQpCount);
        }
        leavingQps[leavingQpCount++] = qpNumber;
    }

    /** The loop polled its CQ empty (loop thread): every completion of the QPs that left has been seen. */
    void cqEmpty() {
        if (leavingQpCount == 0) { // written on the loop thread only
            return;
        }
        synchronized (this) {
            need -= leaving;
            leaving = 0;
            leavingQpCount = 0;
            notifyAll();
        }
    }

    /** A receive of the SRQ completed (loop thread). */
    void onCompletion(int qpNumber, int slot, boolean ok, WcStatus status, int bytes, int vendorError)
            throws RdmaException {
        SrqReceives r;
        boolean overrun = false;
        synchronized (this) {
            r = table.get(qpNumber);
            if (r == null) {
                returnSlot(slot); // of a channel that left
                return;
            }
            if (r.taken == r.receives) {
                overrun = true;
                returnSlot(slot);
            } else {
                r.taken++;
                holder[slot] = r;
                state[slot] = TAKEN;
            }
        }
        MessageChannel ch = r.channel();
        if (overrun) {
            // Its peer ignored the credits: with an SRQ it took a receive promised to another channel.
            ch.fail(new ProtocolException(ch.name() + ": the peer sent more messages than the " + r.receives
                    + " receives it was given"));
        } else {
            ch.onCompletion(MessageChannel.KIND_RECV, slot, ok, status, bytes, vendorError);
        }
    }

    /** {@code r} gives {@code slot} back (loop thread); its peer gets a credit once a receive backs it. */
    void giveBack(SrqReceives r, int slot, boolean credited) {
        boolean creditNow = false;
        synchronized (this) {
            holder[slot] = null;
            r.taken--;
            if (owned > need) {
                retire(slot); // a receive beyond every promise is posted already: it backs the credit
                creditNow = credited;
            } else {
                if (repostCount == repostSlot.length) {
                    repostSlot = Arrays.copyOf(repostSlot, 2 * repostCount);
                    repostCredit = Arrays.copyOf(repostCredit, 2 * repostCount);
                }
                repostSlot[repostCount] = slot;
                repostCredit[repostCount++] = credited ? r : null;
            }
        }
        if (creditNow) {
            r.side().credited(1);
        }
    }

    /** A message the user held past its channel's finish came back (loop thread). */
    synchronized void orphanReleased(int slot) throws RdmaException {
        need--;
        returnSlot(slot);
    }

    /** Posts the slots given back (loop thread), then credits their channels: before any channel flushes. */
    void postReposts() throws RdmaException {
        int n = repostCount;
        if (n == 0) {
            return;
        }
        synchronized (this) {
            for (int from = 0; from < n; from += BATCH) {
                int k = Math.min(BATCH, n - from);
                for (int j = 0; j < k; j++) {
                    int s = repostSlot[from + j];
                    MessageBuffer b = slots[s];
                    batch.wrId(j, wrId(s)).sge(j, 0, b.region, b.offset, slotSize);
                    state[s] = POSTED;
                }
                batch.chain(k);
                queue.postRecv(batch);
            }
        }
        repostCount = 0;
        for (int i = 0; i < n; i++) {
            SrqReceives r = repostCredit[i];
            if (r != null) {
                repostCredit[i] = null;
                r.side().credited(1);
            }
        }
    }

    private void returnSlot(int s) throws RdmaException {
        holder[s] = null;
        if (owned > need) {
            retire(s);
        } else {
            post(s);
        }
    }

    private void post(int s) throws RdmaException {
        MessageBuffer b = slots[s];
        state[s] = POSTED;
        queue.postRecv(b.region, b.offset, slotSize, wrId(s));
    }

    private void retire(int s) {
        slots[s].recycle();
        slots[s] = null;
        messages[s] = null;
        state[s] = FREE;
        free[freeCount++] = s;
        owned--;
    }

    private boolean isLeaving(int qpNumber) {
        for (int i = 0; i < leavingQpCount; i++) {
            if (leavingQps[i] == qpNumber) {
                return true;
            }
        }
        return false;
    }

    private void ensure(int n) {
        if (n <= slots.length) {
            return;
        }
        int size = Math.min(capacity + 1, Math.max(n, 2 * slots.length));
        slots = Arrays.copyOf(slots, size);
        messages = Arrays.copyOf(messages, size);
        holder = Arrays.copyOf(holder, size);
        state = Arrays.copyOf(state, size);
        free = Arrays.copyOf(free, size);
    }

    /** Slots the SRQ holds (posted, or in a message not given back). */
    synchronized int owned() {
        return owned;
    }

    /** Closes the SRQ (its QPs are gone); the slots' buffers go back with the pool. */
    @Override
    public void close() throws RdmaException {
        batch.close();
        queue.close();
    }

    /** QP number to channel, open addressing: found without allocating. */
    private static final class QpTable {
        private int[] keys = new int[64];
        private SrqReceives[] values = new SrqReceives[64];
        private int size;

        SrqReceives get(int qp) {
            int mask = keys.length - 1;
            for (int i = mix(qp) & mask; values[i] != null; i = (i + 1) & mask) {
                if (keys[i] == qp) {
                    return values[i];
                }
            }
            return null;
        }

        void put(int qp, SrqReceives r) {
            if (2 * (size + 1) > keys.length) {
                int[] k = keys;
                SrqReceives[] v = values;
                keys = new int[2 * k.length];
                values = new SrqReceives[2 * k.length];
                size = 0;
                for (int i = 0; i < k.length; i++) {
                    if (v[i] != null) {
                        put(k[i], v[i]);
                    }
                }
            }
            int mask = keys.length - 1;
            int i = mix(qp) & mask;
            while (values[i] != null && keys[i] != qp) {
                i = (i + 1) & mask;
            }
            if (values[i] == null) {
                size++;
            }
            keys[i] = qp;
            values[i] = r;
        }

        void remove(int qp, SrqReceives r) {
            int mask = keys.length - 1;
            int i = mix(qp) & mask;
            while (values[i] != null && keys[i] != qp) {
                i = (i + 1) & mask;
            }
            if (values[i] != r) {
                return;
            }
            values[i] = null;
            size--;
            // backward shift: later entries of the run move up so that no lookup stops early
            for (int j = (i + 1) & mask; values[j] != null; j = (j + 1) & mask) {
                int home = mix(keys[j]) & mask;
                if (((j - home) & mask) >= ((j - i) & mask)) {
                    keys[i] = keys[j];
                    values[i] = values[j];
                    values[j] = null;
                    i = j;
                }
            }
        }

        private static int mix(int x) {
            return x * 0x9E3779B1 >>> 7;
        }
    }
}
