package org.rdmapanama.bench.report;

import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.CategoryAxis;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.renderer.category.LineAndShapeRenderer;
import org.jfree.chart.ui.RectangleEdge;
import org.jfree.data.category.DefaultCategoryDataset;

import javax.imageio.ImageIO;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.geom.Rectangle2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.text.FieldPosition;
import java.text.NumberFormat;
import java.text.ParsePosition;
import java.nio.file.Path;
import java.util.List;

/**
 * The shoot-out's plot.png: a row of panels per case (latency, bandwidths, set-up), the left
 * panel against loss, the right against one-way delay; one line per transport and side, at the
 * medians, on a log scale (figures under loss span orders of magnitude). A condition where no
 * run completed leaves a gap in its line.
 */
public final class ShootoutPlot {
    private ShootoutPlot() {}

    static final int PANEL_W = 640, PANEL_H = 400, TITLE_H = Plot.TITLE_H;

    public static void write(Path png, Shootout.Loaded l) throws IOException {
        System.setProperty("java.awt.headless", "true");
        List<List<Shootout.Condition>> sweeps = List.of(Shootout.sweep(l, true), Shootout.sweep(l, false))
                .stream().filter(s -> s.size() > 1).toList();
        if (l.cases().isEmpty() || sweeps.isEmpty()) {
            throw new IOException("nothing to plot: no case measured under more than one condition");
        }
        BufferedImage img = new BufferedImage(PANEL_W * sweeps.size(), TITLE_H + PANEL_H * l.cases().size(),
                BufferedImage.TYPE_INT_RGB);
        Graphics2D g = Plot.canvas(img,
                "RoCEv2 (rxe) vs iWARP (siw) across an impaired cable: medians, gaps where no run completed");
        try {
            for (int r = 0; r < l.cases().size(); r++) {
                for (int c = 0; c < sweeps.size(); c++) {
                    List<Shootout.Condition> sweep = sweeps.get(c);
                    boolean byLoss = sweep.stream().anyMatch(x -> x.lossPct() > 0);
                    JFreeChart chart = panel(l, l.cases().get(r), sweep, byLoss);
                    if (chart != null) {
                        chart.draw(g, new Rectangle2D.Double(c * PANEL_W, TITLE_H + r * PANEL_H, PANEL_W, PANEL_H));
                    }
                }
            }
        } finally {
            g.dispose();
        }
        if (!ImageIO.write(img, "png", png.toFile())) throw new IOException("no PNG writer in this JDK");
    }

    /** Log-axis ticks fall on odd values (7943.282): three significant figures, as in the table. */
    private static final NumberFormat THREE_FIGURES = new NumberFormat() {
        @Override
        public StringBuffer format(double number, StringBuffer to, FieldPosition pos) {
            return to.append(Shootout.fmt(number));
        }

        @Override
        public StringBuffer format(long number, StringBuffer to, FieldPosition pos) {
            return to.append(Shootout.fmt(number));
        }

        @Override
        public Number parse(String source, ParsePosition pos) {
            throw new UnsupportedOperationException("axis labels are only written");
        }
    };

    /** 0.1, 5, 10: the condition as the runner was given it. */
    static String plain(double v) {
        return java.math.BigDecimal.valueOf(v).stripTrailingZeros().toPlainString();
    }

    static JFreeChart panel(Shootout.Loaded l, Shootout.Case c, List<Shootout.Condition> sweep, boolean byLoss) {
        DefaultCategoryDataset data = new DefaultCategoryDataset();
        double lo = Double.MAX_VALUE, hi = 0;
        for (Shootout.Series s : l.series()) {
            for (Shootout.Condition cond : sweep) {
                Shootout.Cell cell = Shootout.find(l, c, cond, s);
                Double v = cell == null || cell.stats() == null ? null : cell.stats().median();
                String category = byLoss ? plain(cond.lossPct()) + " %" : plain(cond.delayMs()) + " ms";
                data.addValue(v, s.label(), category);
                if (v != null && v > 0) {
                    lo = Math.min(lo, v);
                    hi = Math.max(hi, v);
                }
            }
        }
        if (hi == 0) return null;
        CategoryAxis x = new CategoryAxis(byLoss ? "packet loss on the cable, each direction" : "added one-way delay");
        LogAxis y = new LogAxis(c.metric().unit() + ", log scale");
        y.setSmallestValue(lo / 10);
        y.setRange(lo / 2, hi * 2);
        y.setNumberFormatOverride(THREE_FIGURES);
        LineAndShapeRenderer renderer = new LineAndShapeRenderer(true, true);
        for (int i = 0; i < l.series().size(); i++) {
            Shootout.Series s = l.series().get(i);
            boolean iwarp = s.transport().equalsIgnoreCase("iWARP");
            Color base = iwarp ? new Color(0x22, 0x88, 0x33) : new Color(0x44, 0x77, 0xaa);
            renderer.setSeriesPaint(i, s.side().equals("java") ? base.brighter() : base);
            renderer.setSeriesStroke(i, s.side().equals("java")
                    ? new BasicStroke(2f, BasicStroke.CAP_ROUND, BasicStroke.JOIN_ROUND, 1f, new float[] {6f, 4f}, 0f)
                    : new BasicStroke(2f));
        }
        CategoryPlot plot = new CategoryPlot(data, x, y, renderer);
        plot.setOrientation(PlotOrientation.VERTICAL);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        String title = c.label() + ": " + c.metric().name() + " vs " + (byLoss ? "loss" : "delay") + ", "
                + (c.metric().lowerIsBetter() ? "lower" : "higher") + " is better";
        JFreeChart chart = new JFreeChart(title, new Font(Font.SANS_SERIF, Font.PLAIN, 13), plot, true);
        chart.getLegend().setPosition(RectangleEdge.BOTTOM);
        chart.setBackgroundPaint(Color.WHITE);
        return chart;
    }
}
