package org.rdmapanama.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Kernel RDMA object counts from {@code rdma res show}, summed over devices. */
public final class LeakCheck {
    private LeakCheck() {}

    /**
     * Not ctx: librdmacm opens one context per device the first time rdma_cm
     * is used and keeps it for the life of the process, by design.
     */
    public static final String[] KINDS = {"pd", "mr", "cq", "qp", "cm_id", "srq"};
    public static volatile Map<String, Integer> baseline;

    public static Map<String, Integer> counts() throws IOException, InterruptedException {
        Process p = new ProcessBuilder("rdma", "res", "show").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("rdma res show failed: " + out);
        }
        Map<String, Integer> sum = new TreeMap<>();
        for (String kind : KINDS) {
            Matcher m = Pattern.compile("\\b" + kind + " (\\d+)").matcher(out);
            int total = 0;
            while (m.find()) {
                total += Integer.parseInt(m.group(1));
            }
            sum.put(kind, total);
        }
        return sum;
    }

    /**
     * The counts once they equal {@code expected}, or as they are after 10 s: teardown in the
     * kernel (rxe's QP cleanup, siw's TCP close) lags a little.
     */
    public static Map<String, Integer> awaitCounts(Map<String, Integer> expected) throws IOException, InterruptedException {
        Map<String, Integer> now = counts();
        for (int i = 0; i < 50 && !now.equals(expected); i++) {
            Thread.sleep(200);
            now = counts();
        }
        return now;
    }
}
