package org.rdmapanama.nettybench;

import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.CategoryAxis;
import org.jfree.chart.axis.CategoryLabelPositions;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.renderer.category.LineAndShapeRenderer;
import org.jfree.chart.ui.RectangleEdge;
import org.jfree.data.category.DefaultCategoryDataset;

import javax.imageio.ImageIO;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.Rectangle2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * plot.png: a row per device, a panel per metric (p50, messages/s, CPU per message), cases along x, a line
 * per series at the medians on a log scale. RDMA series are solid, epoll ones dashed; the raw channel black.
 */
final class ReportPlot {
    private ReportPlot() {}

    static final int W = 760, H = 460, TITLE = 40;
    private static final List<Summary.Metric> METRICS = List.of(Summary.Metric.P50, Summary.Metric.RATE, Summary.Metric.CPU);
    private static final Map<String, Color> COLORS = Map.of(
            "channel", Color.BLACK,
            "netty-rdma", new Color(0x1f, 0x77, 0xb4), "netty-epoll", new Color(0x1f, 0x77, 0xb4),
            "grpc-unary-rdma", new Color(0xd6, 0x27, 0x28), "grpc-unary-epoll", new Color(0xd6, 0x27, 0x28),
            "grpc-stream-rdma", new Color(0x2c, 0xa0, 0x2c), "grpc-stream-epoll", new Color(0x2c, 0xa0, 0x2c));

    static void write(Path png, Summary s) throws IOException {
        System.setProperty("java.awt.headless", "true");
        List<String> devices = List.copyOf(s.transports.keySet());
        BufferedImage img = new BufferedImage(W * METRICS.size(), TITLE + H * devices.size(), BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, img.getWidth(), img.getHeight());
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
            g.drawString("Netty echo over RDMA vs epoll TCP vs the raw channel, and gRPC: medians over rounds"
                    + " (qemu TCG, soft devices; cases: size, connections, window)", 12, 26);
            for (int r = 0; r < devices.size(); r++) {
                for (int c = 0; c < METRICS.size(); c++) {
                    JFreeChart chart = panel(s, devices.get(r), METRICS.get(c));
                    if (chart != null) {
                        chart.draw(g, new Rectangle2D.Double(c * W, TITLE + r * H, W, H));
                    }
                }
            }
        } finally {
            g.dispose();
        }
        if (!ImageIO.write(img, "png", png.toFile())) throw new IOException("no PNG writer in this JDK");
    }

    /** Log-axis ticks fall on odd values (7943.282): three significant figures, as in the table. */
    private static final java.text.NumberFormat THREE_FIGURES = new java.text.NumberFormat() {
        @Override
        public StringBuffer format(double number, StringBuffer to, java.text.FieldPosition pos) {
            return to.append(Summary.fmt(number));
        }

        @Override
        public StringBuffer format(long number, StringBuffer to, java.text.FieldPosition pos) {
            return to.append(Summary.fmt(number));
        }

        @Override
        public Number parse(String source, java.text.ParsePosition pos) {
            throw new UnsupportedOperationException("axis labels are only written");
        }
    };

    static JFreeChart panel(Summary s, String device, Summary.Metric m) {
        DefaultCategoryDataset data = new DefaultCategoryDataset();
        double lo = Double.MAX_VALUE, hi = 0;
        for (String x : s.series) {
            for (Result.Case c : s.cases) {
                Summary.Cell cell = s.cell(device, x, c);
                Double v = cell == null ? null : cell.stat(m).median();
                data.addValue(v, x, c.label());
                if (v != null && v > 0) {
                    lo = Math.min(lo, v);
                    hi = Math.max(hi, v);
                }
            }
        }
        if (hi == 0) return null;
        CategoryAxis x = new CategoryAxis("case");
        x.setCategoryLabelPositions(CategoryLabelPositions.UP_45);
        x.setTickLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 10));
        LogAxis y = new LogAxis(m.unit + ", log scale");
        y.setSmallestValue(lo / 10);
        y.setRange(lo / 2, hi * 2);
        y.setNumberFormatOverride(THREE_FIGURES);
        LineAndShapeRenderer renderer = new LineAndShapeRenderer(true, true);
        for (int i = 0; i < s.series.size(); i++) {
            String name = s.series.get(i);
            renderer.setSeriesPaint(i, COLORS.getOrDefault(name, Color.GRAY));
            renderer.setSeriesStroke(i, name.endsWith("epoll")
                    ? new BasicStroke(1.6f, BasicStroke.CAP_ROUND, BasicStroke.JOIN_ROUND, 1f, new float[] {6f, 4f}, 0f)
                    : new BasicStroke(1.8f));
        }
        CategoryPlot plot = new CategoryPlot(data, x, y, renderer);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        String title = device + " (" + s.transports.get(device) + "): " + m.title + ", "
                + (m.lowerIsBetter ? "lower" : "higher") + " is better";
        JFreeChart chart = new JFreeChart(title, new Font(Font.SANS_SERIF, Font.PLAIN, 13), plot, true);
        chart.getLegend().setPosition(RectangleEdge.BOTTOM);
        chart.setBackgroundPaint(Color.WHITE);
        return chart;
    }
}
