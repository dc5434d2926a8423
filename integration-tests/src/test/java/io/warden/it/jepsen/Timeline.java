package io.warden.it.jepsen;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.SymbolAxis;
import org.jfree.chart.plot.IntervalMarker;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYBarRenderer;
import org.jfree.chart.ui.Layer;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.xy.XYIntervalSeries;
import org.jfree.data.xy.XYIntervalSeriesCollection;

/**
 * The picture of a proof run ({@code timeline.png} beside its report), drawn with JFreeChart: one row per lock with a
 * bar for each hold as its client saw it (from the grant's answer to the release's call; red where a violation's
 * operations are), the faults as shaded bands across all rows with their names, and a tick for each session that
 * ended while it held.
 *
 * <p>Concurrency: a function of its arguments, run on the test thread (AWT headless).
 */
final class Timeline {
    private Timeline() {
    }

    static void render(ProofRun.Outcome o, long start, Path png) {
        System.setProperty("java.awt.headless", "true");
        List<String> locks = new ArrayList<>();
        for (Op op : o.history()) {
            if (!Linearizability.EVERY_KEY.equals(op.key()) && !locks.contains(op.key())) {
                locks.add(op.key());
            }
        }
        locks.sort(null);
        java.util.Set<Integer> bad = new java.util.HashSet<>();
        for (Linearizability.Result r : o.violations()) {
            r.stuck().forEach(op -> bad.add(op.id()));
        }
        XYIntervalSeries holds = new XYIntervalSeries("holds");
        XYIntervalSeries violating = new XYIntervalSeries("operations a violation names");
        List<Bar> bars = new ArrayList<>();
        Map<String, Op> open = new HashMap<>();
        long last = start;
        for (Op op : o.history()) {
            last = Math.max(last, op.ret() == Op.NEVER ? op.call() : op.ret());
        }
        for (Op op : o.history()) {
            String key = op.key() + " " + op.session() + " " + op.token();
            if (op.kind() == Op.Kind.ACQUIRE && op.outcome() == Op.Outcome.GRANTED) {
                open.put(key, op);
            } else if (op.kind() == Op.Kind.RELEASE) {
                Op grant = open.remove(key);
                if (grant != null) {
                    bars.add(new Bar(bad.contains(grant.id()) ? violating : holds, locks.indexOf(op.key()), grant.ret(), op.call()));
                }
            }
        }
        for (Op grant : open.values()) {
            bars.add(new Bar(bad.contains(grant.id()) ? violating : holds, locks.indexOf(grant.key()), grant.ret(), last));
        }
        draw(bars, locks.size(), start);
        XYIntervalSeriesCollection data = new XYIntervalSeriesCollection();
        data.addSeries(holds);
        data.addSeries(violating);

        NumberAxis time = new NumberAxis("seconds since the start of the run");
        SymbolAxis rows = new SymbolAxis("lock", locks.toArray(new String[0]));
        XYBarRenderer renderer = new XYBarRenderer();
        renderer.setUseYInterval(true);
        renderer.setShadowVisible(false);
        renderer.setBarPainter(new org.jfree.chart.renderer.xy.StandardXYBarPainter());
        renderer.setSeriesPaint(0, new Color(60, 110, 180));
        renderer.setSeriesPaint(1, new Color(200, 30, 30));
        XYPlot plot = new XYPlot(data, time, rows, renderer);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        Map<Nemesis.Kind, Color> colors = new LinkedHashMap<>();
        Color[] palette = {new Color(255, 200, 120), new Color(180, 220, 160), new Color(200, 180, 230),
                new Color(250, 170, 170), new Color(160, 210, 230), new Color(230, 220, 140), new Color(210, 210, 210),
                new Color(240, 190, 220), new Color(190, 230, 210), new Color(220, 200, 170)};
        for (Nemesis.Fault f : o.faults()) {
            Color c = colors.computeIfAbsent(f.kind(), k -> palette[colors.size() % palette.length]);
            IntervalMarker band = new IntervalMarker(seconds(f.start(), start), seconds(f.end(), start), c);
            band.setAlpha(0.45f);
            band.setLabel(f.kind() + " " + f.target());
            band.setLabelFont(band.getLabelFont().deriveFont(9f));
            band.setLabelAnchor(RectangleAnchor.TOP_LEFT);
            band.setLabelTextAnchor(TextAnchor.TOP_LEFT);
            plot.addDomainMarker(band, Layer.BACKGROUND);
        }
        for (Op op : o.history()) {
            if (op.kind() == Op.Kind.END && op.ret() != Op.NEVER && op.ret() - op.call() > 0) {
                ValueMarker end = new ValueMarker(seconds(op.ret(), start), new Color(120, 120, 120), new BasicStroke(0.5f));
                end.setAlpha(0.25f);
                plot.addDomainMarker(end, Layer.BACKGROUND);
            }
        }
        String title = "proof run " + o.plan().run() + ", seed " + o.plan().seed()
                + (o.plan().fault() == null ? "" : ", deliberate bug " + o.plan().fault())
                + (o.clean() ? ": no violation" : ": VIOLATIONS");
        JFreeChart chart = new JFreeChart(title, JFreeChart.DEFAULT_TITLE_FONT.deriveFont(13f), plot, true);
        chart.setBackgroundPaint(Color.WHITE);
        try {
            ChartUtils.saveChartAsPNG(png.toFile(), chart, 1400, 140 + 45 * Math.max(3, locks.size()));
        } catch (IOException e) {
            throw new UncheckedIOException("writing " + png, e);
        }
    }

    /** One hold to draw: on the row of its lock, from its grant's answer to its release's call. */
    private record Bar(XYIntervalSeries series, int row, long from, long to) {
    }

    /**
     * Draws the bars, holds that overlap in time on one row side by side in lanes (a hold of a row whose holds never
     * overlap takes the row's whole height), so two holders at once show as two bars, not one over the other.
     */
    private static void draw(List<Bar> bars, int rows, long start) {
        List<Bar> sorted = new ArrayList<>(bars);
        sorted.sort(java.util.Comparator.comparingLong(Bar::from));
        Map<Bar, Integer> laneOf = new java.util.IdentityHashMap<>();
        int[] lanes = new int[Math.max(1, rows)];
        List<List<Long>> laneEnds = new ArrayList<>();
        for (int r = 0; r < Math.max(1, rows); r++) {
            laneEnds.add(new ArrayList<>());
        }
        for (Bar b : sorted) {
            List<Long> ends = laneEnds.get(b.row());
            int lane = 0;
            while (lane < ends.size() && ends.get(lane) > b.from()) {
                lane++;
            }
            if (lane == ends.size()) {
                ends.add(b.to());
            } else {
                ends.set(lane, Math.max(b.to(), b.from()));
            }
            laneOf.put(b, lane);
            lanes[b.row()] = Math.max(lanes[b.row()], lane + 1);
        }
        for (Bar b : sorted) {
            double x0 = seconds(b.from(), start);
            double x1 = Math.max(x0, seconds(b.to(), start));
            double height = 0.7 / lanes[b.row()];
            double y0 = b.row() - 0.35 + laneOf.get(b) * height;
            b.series().add((x0 + x1) / 2, x0, x1, b.row(), y0, y0 + height * 0.9);
        }
    }

    private static double seconds(long nanos, long start) {
        return (nanos - start) / 1e9;
    }
}
