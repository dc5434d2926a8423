package io.warden.service.metrics;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The alert rules file loads in Prometheus: {@code promtool check rules} (Debian's {@code prometheus} package, which
 * test.sh installs) parses every expression and template. That the rules name only exported metrics is
 * MetricNamesTest's part.
 */
class AlertRulesPromtoolTest {
    static final Path RULES = Path.of("..", "docs", "observability", "warden-alerts.yml").toAbsolutePath().normalize();

    @Test
    void alertRules_passPromtoolCheckRules() throws Exception {
        assertThat(RULES).exists();
        Process p;
        try {
            p = new ProcessBuilder("promtool", "check", "rules", RULES.toString()).redirectErrorStream(true).start();
        } catch (IOException notFound) {
            throw new AssertionError("promtool is not installed: install the Debian package prometheus "
                    + "(apt-get install prometheus; test.sh does)", notFound);
        }
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("promtool finished within 60 s").isTrue();
        assertThat(p.exitValue()).as("promtool check rules %s:%n%s", RULES, out).isZero();
        assertThat(out).contains("SUCCESS");
        long alerts = Files.readAllLines(RULES).stream().filter(l -> l.trim().startsWith("- alert:")).count();
        assertThat(out).as("promtool counted every rule").contains(alerts + " rules found");
    }
}
