package org.rdmapanama.verbs;

import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.error.ResourceBusyException;
import org.rdmapanama.error.ResourceInUseException;
import org.junit.jupiter.api.Test;
import org.rdmapanama.error.RdmaException;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The ownership rules of {@link NativeResource}, on a fake resource whose "C
 * object" is a 16-byte block: close order, dependents, a child created while
 * its owner closes, a constructor that fails or is overtaken by its owner's
 * close, and a close that meets a call in progress. No device needed.
 */
class NativeResourceTest {
    /** Every free of a fake C object, in order: its name. */
    private final List<String> freed = new CopyOnWriteArrayList<>();

    private final class Fake extends NativeResource {
        private final String name;

        Fake(String name, Native n, NativeResource owner, CountDownLatch entered, CountDownLatch proceed) {
            super("Fake " + name, n, owner);
            if (entered != null) { // a constructor still running after super(): nothing may see it yet
                entered.countDown();
                await(proceed);
            }
            this.name = name;
        }

        @Override
        protected void destroy(MemorySegment raw) {
            insideAtDestroy.add(inside.get());
            freed.add(name == null ? "<half-built>" : name); // a null name: destroy ran on an unfinished object
            if (name != null && name.startsWith("slow")) {
                slowDestroyEntered.countDown();
                await(slowDestroyProceed);
            }
        }

        MemorySegment useHandle() {
            return handle();
        }

        @Override
        protected void opened() {
            if ("late to open".equals(name)) { // registered with its owner, not yet handed out
                openedEntered.countDown();
                await(openedProceed);
            }
        }

        /** A guarded call: the handle's first long is set while inside, cleared on the way out. */
        void guardedCall(long holdNanos) {
            MemorySegment h = enter();
            try {
                inside.incrementAndGet();
                h.set(JAVA_LONG, 0, 1);
                if (holdNanos > 0) {
                    java.util.concurrent.locks.LockSupport.parkNanos(holdNanos);
                }
                h.set(JAVA_LONG, 0, 0);
                inside.decrementAndGet();
            } finally {
                leave();
            }
        }
    }

    /** Guarded calls in progress; destroy records it, and it must be 0 then. */
    private final java.util.concurrent.atomic.AtomicInteger inside = new java.util.concurrent.atomic.AtomicInteger();
    private final List<Integer> insideAtDestroy = new CopyOnWriteArrayList<>();

    /** Runs {@code body} on a new thread; {@code outcome} gets what it returned, or what it threw. */
    private static Thread inThread(java.util.concurrent.Callable<?> body, AtomicReference<Object> outcome) {
        return Thread.ofPlatform().start(() -> {
            try {
                outcome.set(body.call());
            } catch (Throwable t) {
                outcome.set(t);
            }
        });
    }

    /**
     * Closes {@code owner} on another thread while {@code maker} holds it: nothing may be
     * freed until {@code release} lets the maker go; then the close must return.
     */
    private void closeMustWaitFor(Fake owner, Thread maker, CountDownLatch release, String why) throws Exception {
        AtomicReference<Object> closed = new AtomicReference<>();
        Thread closer = inThread(() -> {
            owner.close();
            return null;
        }, closed);
        Thread.sleep(100);
        assertEquals(List.of(), freed, why);
        release.countDown();
        maker.join();
        closer.join();
        assertEquals(null, closed.get());
    }

    private final CountDownLatch openedEntered = new CountDownLatch(1);
    private final CountDownLatch openedProceed = new CountDownLatch(1);
    private final CountDownLatch slowDestroyEntered = new CountDownLatch(1);
    private final CountDownLatch slowDestroyProceed = new CountDownLatch(1);

    private static void await(CountDownLatch latch) {
        try {
            assertTrue(latch.await(10, TimeUnit.SECONDS), "latch timed out");
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    private Fake create(String name, NativeResource owner) throws RdmaException {
        return create(name, owner, null, null);
    }

    private Fake create(String name, NativeResource owner, CountDownLatch entered, CountDownLatch proceed)
            throws RdmaException {
        return make(name, owner, entered, proceed, false);
    }

    private Fake make(String name, NativeResource owner, CountDownLatch entered, CountDownLatch proceed,
                      boolean guarded) throws RdmaException {
        MemorySegment raw = Arena.global().allocate(16, 8);
        NativeResource.Freer freer = r -> freed.add("freed by own: " + name);
        NativeResource.Wrapper<Fake> wrapper = n -> new Fake(name, n, owner, entered, proceed);
        return guarded ? NativeResource.ownGuarded(raw, 16, freer, wrapper) : NativeResource.own(raw, 16, freer, wrapper);
    }

    @Test
    void closesChildrenNewestFirstThenItself() throws Exception {
        Fake parent = create("parent", null);
        Fake a = create("a", parent);
        create("b", parent);
        create("b1", a);
        parent.close();
        assertEquals(List.of("b", "b1", "a", "parent"), freed);
        parent.close(); // idempotent
        assertEquals(4, freed.size());
        assertThrows(ClosedResourceException.class, () -> create("late", parent));
        assertEquals("freed by own: late", freed.getLast(), "a child refused by a closed owner is still freed");
    }

    @Test
    void aDependentBlocksCloseWithATypedErrorUntilItLets() throws Exception {
        Fake cq = create("cq", null);
        Dependent qp = new Dependent("QueuePair 7");
        cq.addUser(qp);
        ResourceInUseException e = assertThrows(ResourceInUseException.class, cq::close);
        assertTrue(e.getMessage().contains("still used by QueuePair 7"), e.getMessage());
        assertFalse(cq.isClosed());
        cq.useHandle().get(JAVA_LONG, 0); // still usable
        cq.removeUser(qp);
        cq.close();
        assertEquals(List.of("cq"), freed);
    }

    @Test
    void aChildUsedByAnotherOwnersResourceIsRefusedWithoutFreeingAnything() throws Exception {
        Fake ctx = create("ctx", null);
        Fake cq = create("cq", ctx);
        Fake otherCtx = create("other", null);
        cq.addUser(otherCtx);
        ResourceInUseException e = assertThrows(ResourceInUseException.class, ctx::close);
        assertTrue(e.getMessage().contains("still used by Fake other"), e.getMessage());
        assertFalse(ctx.isClosed() || cq.isClosed());
        assertEquals(List.of(), freed);
        create("pd", ctx); // the owner took children again once the close was refused
        cq.removeUser(otherCtx);
        ctx.close();
        assertEquals(List.of("pd", "cq", "ctx"), freed);
    }

    @Test
    void aChildCannotBeAddedWhileItsOwnerIsClosing() throws Exception {
        Fake parent = create("parent", null);
        create("slow child", parent);
        AtomicReference<Object> closeFailed = new AtomicReference<>();
        Thread closer = inThread(() -> {
            parent.close();
            return null;
        }, closeFailed);
        await(slowDestroyEntered); // the parent has taken its list of children and is closing them
        ClosedResourceException e = assertThrows(ClosedResourceException.class, () -> create("late", parent));
        assertTrue(e.getMessage().contains("is closing"), e.getMessage());
        slowDestroyProceed.countDown();
        closer.join(10_000);
        assertEquals(null, closeFailed.get());
        // The late child was refused and its C object freed at once; nothing outlived the parent.
        assertEquals(List.of("slow child", "freed by own: late", "parent"), freed);
    }

    @Test
    void anOwnerClosingDuringAChildsConstructorNeverSeesTheHalfBuiltChild() throws Exception {
        Fake parent = create("parent", null);
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        AtomicReference<Object> creation = new AtomicReference<>();
        Thread creator = inThread(() -> create("child", parent, entered, proceed), creation);
        await(entered);
        parent.close(); // must not destroy an object whose constructor has not finished
        assertEquals(List.of("parent"), freed);
        proceed.countDown();
        creator.join(10_000);
        assertTrue(creation.get() instanceof ClosedResourceException, String.valueOf(creation.get()));
        assertEquals(List.of("parent", "freed by own: child"), freed);
    }

    @Test
    void aWrapperThatFailsLeavesNoNativeObjectBehind() throws Exception {
        Fake parent = create("parent", null);
        MemorySegment raw = Arena.global().allocate(16, 8);
        RdmaException e = assertThrows(RdmaException.class, () -> NativeResource.own(raw, 16,
                r -> freed.add("freed by own: " + r.address()), n -> {
                    new Fake("wrapped", n, parent, null, null);
                    throw new RdmaException("the wrapper failed after building");
                }));
        assertEquals("the wrapper failed after building", e.getMessage());
        assertEquals(List.of("freed by own: " + raw.address()), freed);
        parent.close();
        assertEquals(List.of("freed by own: " + raw.address(), "parent"), freed, "the failed child was never adopted");
    }

    private static final MethodHandle NANOSLEEP = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("nanosleep").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));

    /** A call that holds {@code r}'s handle for {@code millis}: nanosleep reads its timespec from it. */
    private static Thread callHolding(Fake r, long millis, CountDownLatch started) {
        MemorySegment ts = r.useHandle();
        ts.set(JAVA_LONG, 0, millis / 1000);
        ts.set(JAVA_LONG, 8, (millis % 1000) * 1_000_000);
        return Thread.ofPlatform().start(() -> {
            started.countDown();
            try {
                int rc = (int) NANOSLEEP.invokeExact(ts, MemorySegment.NULL);
                assertEquals(0, rc);
            } catch (Throwable t) {
                throw new AssertionError(t);
            }
        });
    }

    @Test
    void closeWaitsForACallOnAnotherThreadToReturn() throws Exception {
        Fake r = create("busy", null);
        CountDownLatch started = new CountDownLatch(1);
        Thread call = callHolding(r, 400, started);
        await(started);
        Thread.sleep(50); // let the downcall begin
        long t0 = System.nanoTime();
        r.close();
        long waited = System.nanoTime() - t0;
        assertTrue(r.isClosed());
        // The call lasts 400 ms from about 50 ms before the close. (The thread may still be on
        // its way out when close returns, so its liveness says nothing.)
        assertTrue(waited > 100_000_000L, "close did not wait: " + waited + " ns");
        call.join();
        assertEquals(List.of("busy"), freed);
        assertThrows(IllegalStateException.class, () -> r.useHandle().get(JAVA_LONG, 0));
    }

    @Test
    void closeThatCannotWaitLongEnoughIsRefusedAndLeavesTheResourceOpen() throws Exception {
        Fake parent = create("parent", null);
        Fake child = create("child", parent);
        CountDownLatch started = new CountDownLatch(1);
        Thread call = callHolding(child, 1500, started);
        await(started);
        Thread.sleep(100);
        ResourceBusyException e = assertThrows(ResourceBusyException.class, () -> parent.close(Duration.ofMillis(50)));
        assertTrue(e.getMessage().contains("Fake child is still in a call on another thread"), e.getMessage());
        assertFalse(parent.isClosed() || child.isClosed());
        assertEquals(List.of(), freed, "nothing may be freed under the call");
        call.join();
        parent.close();
        assertEquals(List.of("child", "parent"), freed);
    }

    private Fake createGuarded(String name, NativeResource owner) throws RdmaException {
        return make(name, owner, null, null, true);
    }

    @Test
    void aGuardedResourceHasNoArenaAndRefusesCallsOnceClosed() throws Exception {
        Fake parent = create("parent", null);
        Fake g = createGuarded("guarded", parent);
        assertThrows(IllegalStateException.class, g::useHandle, "a guarded handle is only used between enter and leave");
        assertThrows(IllegalStateException.class, g::arena);
        g.guardedCall(0);
        parent.close();
        assertEquals(List.of("guarded", "parent"), freed, "a guarded child closes before its owner, like any child");
        ClosedResourceException e = assertThrows(ClosedResourceException.class, () -> g.guardedCall(0));
        assertTrue(e.getMessage().contains("Fake guarded is closed"), e.getMessage());
        assertEquals(List.of(0, 0), insideAtDestroy);
    }

    @Test
    void aGuardedCloseWaitsForACallOnAnotherThreadOrIsRefused() throws Exception {
        Fake g = createGuarded("guarded", null);
        CountDownLatch started = new CountDownLatch(1);
        Thread call = Thread.ofPlatform().start(() -> {
            started.countDown();
            g.guardedCall(1_500_000_000L);
        });
        await(started);
        while (inside.get() == 0) {
            Thread.onSpinWait();
        }
        ResourceBusyException busy = assertThrows(ResourceBusyException.class, () -> g.close(Duration.ofMillis(50)));
        assertTrue(busy.getMessage().contains("Fake guarded is still in a call on another thread"), busy.getMessage());
        assertFalse(g.isClosed());
        assertEquals(List.of(), freed, "nothing may be freed under the call");
        long t0 = System.nanoTime();
        g.close();
        assertTrue(System.nanoTime() - t0 > 100_000_000L, "close did not wait for the call");
        assertEquals(List.of("guarded"), freed);
        assertEquals(List.of(0), insideAtDestroy, "destroyed while the call was inside");
        call.join();
    }

    @Test
    void noGuardedCallIsInsideWhenItsResourceIsDestroyed() throws Exception {
        for (int round = 0; round < 50; round++) {
            Fake g = createGuarded("guarded " + round, null);
            CountDownLatch go = new CountDownLatch(1);
            List<Thread> callers = new java.util.ArrayList<>();
            java.util.concurrent.atomic.AtomicInteger unexpected = new java.util.concurrent.atomic.AtomicInteger();
            for (int t = 0; t < 3; t++) {
                callers.add(Thread.ofPlatform().start(() -> {
                    await(go);
                    while (true) {
                        try {
                            g.guardedCall(0);
                        } catch (ClosedResourceException closed) {
                            return;
                        } catch (Throwable other) {
                            unexpected.incrementAndGet();
                            return;
                        }
                    }
                }));
            }
            go.countDown();
            Thread.sleep(2);
            g.close();
            for (Thread t : callers) {
                t.join();
            }
            assertEquals(0, unexpected.get());
        }
        assertEquals(50, insideAtDestroy.size());
        assertTrue(insideAtDestroy.stream().allMatch(n -> n == 0), "a call was inside at destroy: " + insideAtDestroy);
    }

    @Test
    void aGuardedOwnerClosingWhileAChildIsMadeOnItFreesTheChildBeforeItself() throws Exception {
        Fake owner = createGuarded("owner", null);
        CountDownLatch making = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        AtomicReference<Object> made = new AtomicReference<>(); // a Fake here: registered with a closing owner
        Thread maker = inThread(() -> owner.ownChild(h -> {
            making.countDown();
            await(proceed);
            return Arena.global().allocate(16, 8);
        }, 16, r -> freed.add("freed by own: child"), n -> new Fake("child", n, owner, null, null), false), made);
        await(making);
        closeMustWaitFor(owner, maker, proceed, "the owner was freed while a child was being made on it");
        assertTrue(made.get() instanceof ClosedResourceException, String.valueOf(made.get()));
        assertEquals(List.of("freed by own: child", "owner"), freed);
    }

    @Test
    void aGuardedOwnerClosesAChildOnlyAfterTheChildsMakingIsDone() throws Exception {
        Fake owner = createGuarded("owner", null);
        AtomicReference<Object> made = new AtomicReference<>();
        Thread maker = inThread(() -> owner.ownChild(h -> Arena.global().allocate(16, 8), 16,
                r -> freed.add("freed by own"), n -> new Fake("late to open", n, owner, null, null), false), made);
        await(openedEntered);
        closeMustWaitFor(owner, maker, openedProceed, "a child was closed while it was still being made");
        assertEquals(List.of("late to open", "owner"), freed);
        assertTrue(made.get() instanceof Fake f && f.isClosed(), String.valueOf(made.get()));
    }
}
