package io.warden.it.console;

import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.NoAlertPresentException;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.support.ui.ExpectedCondition;
import org.openqa.selenium.support.ui.WebDriverWait;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.stream.Stream;

/**
 * A headless Debian Chromium driven through Debian's chromedriver: both paths are given, so Selenium Manager never runs
 * and nothing is downloaded. Each instance has its own fresh profile directory (deleted on {@link #close}) and a
 * 1280x900 window. Waits are {@link WebDriverWait}s with deadlines; nothing sleeps.
 *
 * <p>Concurrency: one test thread at a time, like the WebDriver it wraps.
 */
final class Browser implements AutoCloseable {
    static final String CHROMIUM = "/usr/bin/chromium";
    static final String CHROMEDRIVER = "/usr/bin/chromedriver";
    static final Duration DEFAULT_WAIT = Duration.ofSeconds(10);
    /**
     * Without the selenium-devtools artifacts Selenium warns once per browser that it has no CDP bindings for this
     * Chromium; the tests use only chromedriver's own CDP pass-through, so the warning is noise. Held strongly:
     * java.util.logging keeps its loggers weakly.
     */
    private static final Logger CDP_VERSION_FINDER = Logger.getLogger("org.openqa.selenium.devtools.CdpVersionFinder");

    static {
        CDP_VERSION_FINDER.setLevel(Level.SEVERE);
    }

    private final Path profile;
    private final ChromeDriverService service;
    private final ChromeDriver driver;

    private Browser(Path profile, ChromeDriverService service, ChromeDriver driver) {
        this.profile = profile;
        this.service = service;
        this.driver = driver;
    }

    /** Starts Chromium; throws with the reason when either binary is missing (see .ci/run, which installs them). */
    static Browser start() throws IOException {
        for (String binary : new String[]{CHROMIUM, CHROMEDRIVER}) {
            if (!Files.isExecutable(Path.of(binary))) {
                throw new IllegalStateException(binary + " is missing: apt-get install -y chromium chromium-driver");
            }
        }
        Path profile = Files.createTempDirectory("warden-chromium-");
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(new File(CHROMEDRIVER))
                .usingAnyFreePort()
                .build();
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM);
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-quic",
                "--no-first-run", "--user-data-dir=" + profile, "--window-size=1280,900", "--lang=en-US");
        // The page's console messages, for the "no JavaScript errors" checks.
        options.setCapability("goog:loggingPrefs", Map.of(LogType.BROWSER, "ALL"));
        ChromeDriver driver;
        try {
            driver = new ChromeDriver(service, options);
        } catch (RuntimeException e) {
            service.stop();
            deleteTree(profile, e);
            throw e;
        }
        Browser b = new Browser(profile, service, driver);
        b.resize(1280, 900);
        return b;
    }

    ChromeDriver driver() {
        return driver;
    }

    /** Loads {@code url} and waits until the document has loaded. */
    void open(String url) {
        driver.get(url);
        until("the page " + url + " to load", d -> "complete".equals(js("return document.readyState")));
    }

    /** Waits up to {@link #DEFAULT_WAIT} for an element that matches, and returns it. */
    WebElement await(By by) {
        return await(by, DEFAULT_WAIT);
    }

    WebElement await(By by, Duration within) {
        return wait(within).withMessage(() -> "waiting for " + by + " on " + driver.getCurrentUrl())
                .until(d -> d.findElements(by).stream().findFirst().orElse(null));
    }

    /** Waits up to {@link #DEFAULT_WAIT} until {@code by} matches nothing. */
    void awaitGone(By by) {
        until(by + " to disappear", d -> d.findElements(by).isEmpty());
    }

    /** Waits up to {@link #DEFAULT_WAIT} until the condition holds (not null, not false). */
    <T> T until(String what, ExpectedCondition<T> condition) {
        return until(what, DEFAULT_WAIT, condition);
    }

    <T> T until(String what, Duration within, ExpectedCondition<T> condition) {
        return wait(within).withMessage(() -> "waiting for " + what + " on " + driver.getCurrentUrl())
                .until(condition);
    }

    private WebDriverWait wait(Duration within) {
        WebDriverWait w = new WebDriverWait(driver, within, Duration.ofMillis(100));
        w.ignoring(org.openqa.selenium.StaleElementReferenceException.class); // htmx swaps rows under us
        return w;
    }

    List<WebElement> all(By by) {
        return driver.findElements(by);
    }

    Object js(String script, Object... args) {
        return ((JavascriptExecutor) driver).executeScript(script, args);
    }

    /**
     * Marks the current document; {@link #sameDocument()} is true until the browser loads another one. Proves that
     * something appeared through a live update rather than a reload.
     */
    void markDocument() {
        js("window.__wardenMark = 'kept';");
    }

    boolean sameDocument() {
        return "kept".equals(js("return window.__wardenMark || null;"));
    }

    /** Whether a JavaScript dialog (alert, confirm) is open. */
    boolean alertOpen() {
        try {
            driver.switchTo().alert();
            return true;
        } catch (NoAlertPresentException e) {
            return false;
        }
    }

    /** The page's console messages at SEVERE (errors, failed loads) since the last call. */
    List<String> consoleErrors() {
        return driver.manage().logs().get(LogType.BROWSER).getAll().stream()
                .filter(e -> e.getLevel().intValue() >= Level.SEVERE.intValue())
                .map(LogEntry::getMessage).toList();
    }

    /** Sets the window's size; headless Chromium makes the viewport exactly that. */
    void resize(int width, int height) {
        driver.manage().window().setSize(new Dimension(width, height));
    }

    /** Sets cookies aside: the next page is seen as by someone who never logged in. */
    void clearCookies() {
        driver.executeCdpCommand("Network.clearBrowserCookies", Map.of());
    }

    /** Saves a PNG of the viewport to {@code file} (its directory is made if needed). */
    void screenshot(Path file) {
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            Files.write(file, driver.getScreenshotAs(OutputType.BYTES));
        } catch (IOException e) {
            throw new UncheckedIOException("could not save a screenshot to " + file, e);
        }
    }

    /**
     * Saves a PNG of the whole page, up to {@code maxHeight} CSS pixels tall: the window is made as tall as the page
     * for the picture, then given its size back.
     */
    void screenshotOfPage(Path file, int maxHeight) {
        Dimension before = driver.manage().window().getSize();
        long page = ((Number) js("return document.documentElement.scrollHeight")).longValue();
        long frame = ((Number) js("return window.outerHeight - window.innerHeight")).longValue();
        try {
            driver.manage().window().setSize(new Dimension(before.getWidth(), (int) (Math.min(page, maxHeight) + frame)));
            screenshot(file);
        } finally {
            driver.manage().window().setSize(before);
        }
    }

    String pageSource() {
        return driver.getPageSource();
    }

    String currentUrl() {
        return driver.getCurrentUrl();
    }

    @Override
    public void close() {
        RuntimeException failure = null;
        try {
            driver.quit();
        } catch (RuntimeException e) {
            failure = e;
        }
        try {
            service.stop();
        } catch (RuntimeException e) {
            if (failure == null) {
                failure = e;
            } else {
                failure.addSuppressed(e);
            }
        }
        deleteTree(profile, failure);
        if (failure != null) {
            throw failure;
        }
    }

    /** Deletes a directory tree; a failure is added to {@code primary} when there is one, else thrown. */
    private static void deleteTree(Path root, RuntimeException primary) {
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            UncheckedIOException failure = new UncheckedIOException("could not delete the browser profile " + root, e);
            if (primary == null) {
                throw failure;
            }
            primary.addSuppressed(failure);
        }
    }
}
