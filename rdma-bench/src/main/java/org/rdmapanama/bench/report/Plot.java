package org.rdmapanama.bench.report;

import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.CategoryAxis;
import org.jfree.chart.axis.CategoryLabelPositions;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.ValueAxis;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.CategoryItemRendererState;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.chart.ui.RectangleEdge;
import org.jfree.data.category.CategoryDataset;
import org.jfree.data.category.DefaultCategoryDataset;

import javax.imageio.ImageIO;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.Line2D;
import java.awt.geom.Rectangle2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * plot.png: one row of panels per device, one panel per metric (lower-is-better first), native
 * against Java as bars at the medians with min..max whiskers over the rounds.
 */
public final class Plot {
    private Plot() {}

    static final Color NATIVE = new Color(0x44, 0x77, 0xaa);
    static final Color JAVA = new Color(0xee, 0x66, 0x77);
    static final int PANEL_W = 700, PANEL_H = 440, TITLE_H = 36;

    public static void write(Path png, String title, String nativeName, String javaName, List<Comparison> rows) throws IOException {
        // No display on the host or in the lab; headless must be set before AWT initializes.
        System.setProperty("java.awt.headless", "true");
        List<String> devices = rows.stream().map(Comparison::device).distinct().toList();
        List<Metric> metrics = rows.stream().map(Comparison::metric).distinct()
                .sorted(Comparator.comparing((Metric m) -> !m.lowerIsBetter()).thenComparing(Metric::name)).toList();
        if (devices.isEmpty()) throw new IOException("nothing to plot: no measured values");
        BufferedImage img = new BufferedImage(PANEL_W * metrics.size(), TITLE_H + PANEL_H * devices.size(), BufferedImage.TYPE_INT_RGB);
        Graphics2D g = canvas(img, title + ": medians, bars min..max over rounds");
        try {
            for (int r = 0; r < devices.size(); r++) {
                for (int c = 0; c < metrics.size(); c++) {
                    String d = devices.get(r);
                    Metric m = metrics.get(c);
                    List<Comparison> mine = rows.stream().filter(x -> x.device().equals(d) && x.metric().equals(m)).toList();
                    Rectangle2D area = new Rectangle2D.Double(c * PANEL_W, TITLE_H + r * PANEL_H, PANEL_W, PANEL_H);
                    if (mine.isEmpty()) continue;
                    panel(m.title(d, mine.getFirst().transport()), m, nativeName, javaName, mine).draw(g, area);
                }
            }
        } finally {
            g.dispose();
        }
        if (!ImageIO.write(img, "png", png.toFile())) throw new IOException("no PNG writer in this JDK");
    }

    /**
     * A white image with antialiasing and the heading centred on top, at the largest size up to 16
     * points that fits (a one-panel-wide image takes it smaller). The caller disposes of it.
     */
    static Graphics2D canvas(BufferedImage img, String heading) {
        Graphics2D g = img.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, img.getWidth(), img.getHeight());
        g.setColor(Color.BLACK);
        for (int size = 16; size > 8; size--) {
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, size));
            if (g.getFontMetrics().stringWidth(heading) < img.getWidth() - 20) break;
        }
        g.drawString(heading, Math.max(10, (img.getWidth() - g.getFontMetrics().stringWidth(heading)) / 2), TITLE_H - 10);
        return g;
    }

    static JFreeChart panel(String title, Metric metric, String nativeName, String javaName, List<Comparison> cases) {
        DefaultCategoryDataset data = new DefaultCategoryDataset();
        Map<String, double[]> whiskers = new HashMap<>(); // "series|category" -> {min, max}
        double top = 0;
        for (Comparison c : cases) {
            String n = "n=" + (c.nat() == null ? 0 : c.nat().n()) + "/" + (c.java() == null ? 0 : c.java().n());
            String category = c.label() + "\n" + (Double.isNaN(c.ratio()) ? n : String.format(Locale.ROOT, "Java/native %.3f, %s", c.ratio(), n));
            top = Math.max(top, add(data, whiskers, nativeName, category, c.nat()));
            top = Math.max(top, add(data, whiskers, javaName, category, c.java()));
        }
        CategoryAxis x = new CategoryAxis();
        // Six cases a panel wrap "write_bw -q 4 2 B, Java client + native server" and its ratio over five lines.
        x.setMaximumCategoryLabelLines(6);
        x.setCategoryLabelPositions(CategoryLabelPositions.STANDARD);
        NumberAxis y = new NumberAxis(metric.unit());
        // The whiskers reach above the medians the axis would fit by itself.
        y.setRange(0, top > 0 ? top * 1.08 : 1);
        WhiskerBarRenderer renderer = new WhiskerBarRenderer(whiskers);
        renderer.setBarPainter(new StandardBarPainter());
        renderer.setShadowVisible(false);
        renderer.setDrawBarOutline(true);
        renderer.setItemMargin(0.05);
        renderer.setMaximumBarWidth(0.2);
        renderer.setSeriesPaint(0, NATIVE);
        renderer.setSeriesPaint(1, JAVA);
        renderer.setSeriesOutlinePaint(0, Color.DARK_GRAY);
        renderer.setSeriesOutlinePaint(1, Color.DARK_GRAY);
        CategoryPlot plot = new CategoryPlot(data, x, y, renderer);
        plot.setOrientation(PlotOrientation.VERTICAL);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        JFreeChart chart = new JFreeChart(title, new Font(Font.SANS_SERIF, Font.PLAIN, 13), plot, true);
        chart.getLegend().setPosition(RectangleEdge.BOTTOM);
        chart.setBackgroundPaint(Color.WHITE);
        return chart;
    }

    /** Adds one bar (none when {@code s} is null); returns its whisker's top. */
    private static double add(DefaultCategoryDataset data, Map<String, double[]> whiskers, String series, String category, Stats s) {
        data.addValue(s == null ? null : s.median(), series, category);
        if (s == null) return 0;
        whiskers.put(series + "|" + category, new double[] {s.min(), s.max()});
        return s.max();
    }

    /** Bars at the median with a min..max whisker over each. */
    static final class WhiskerBarRenderer extends BarRenderer {
        private static final long serialVersionUID = 1L;
        private final Map<String, double[]> whiskers;

        WhiskerBarRenderer(Map<String, double[]> whiskers) {
            this.whiskers = whiskers;
        }

        @Override
        public void drawItem(Graphics2D g2, CategoryItemRendererState state, Rectangle2D dataArea, CategoryPlot plot,
                             CategoryAxis domainAxis, ValueAxis rangeAxis, CategoryDataset dataset, int row, int column, int pass) {
            super.drawItem(g2, state, dataArea, plot, domainAxis, rangeAxis, dataset, row, column, pass);
            double[] w = whiskers.get(dataset.getRowKey(row) + "|" + dataset.getColumnKey(column));
            if (w == null) return;
            double x = calculateBarW0(plot, plot.getOrientation(), dataArea, domainAxis, state, row, column) + state.getBarWidth() / 2;
            double lo = rangeAxis.valueToJava2D(w[0], dataArea, plot.getRangeAxisEdge());
            double hi = rangeAxis.valueToJava2D(w[1], dataArea, plot.getRangeAxisEdge());
            double cap = state.getBarWidth() / 4;
            g2.setPaint(Color.BLACK);
            g2.setStroke(new BasicStroke(1.2f));
            g2.draw(new Line2D.Double(x, lo, x, hi));
            g2.draw(new Line2D.Double(x - cap, lo, x + cap, lo));
            g2.draw(new Line2D.Double(x - cap, hi, x + cap, hi));
        }
    }
}
