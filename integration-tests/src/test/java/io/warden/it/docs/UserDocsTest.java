package io.warden.it.docs;

import io.warden.it.support.RepoRoot;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.MalformedInputException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * What users read — the Markdown docs, and the production sources whose comments, {@code --help} texts and error
 * messages reach them — speaks for itself: it names no entry of the project's tracker (a reader cannot look one up)
 * and no file outside the repository (a reader does not have it); and every relative link of the docs leads to a
 * file, and to a heading of it when it names one. Each finding is reported as {@code file:line}.
 */
class UserDocsTest {
    /** "issue 9", "Issue 12's", "findings 3 and 4", "issue #7". */
    private static final Pattern TRACKER = Pattern.compile("(?i)\\b(issue|finding)s?\\s*#?\\d+");
    /** A numbered section of a document the repository does not hold ("contract §2.3", "§3"); an RFC's is fine. */
    private static final Pattern SECTION = Pattern.compile("(?<!RFC \\d{4} )§\\s*\\d");
    /** The development tree around the repository. */
    private static final Pattern OUTSIDE = Pattern.compile("\\.\\./shared\\b|\\bshared/design\\b|/work/");
    /** A Markdown link's target: [text](target) or [text](target "title"). */
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");

    /** The production source trees of the modules users run or build against. */
    private static final List<String> SOURCE_TREES = List.of(
            "service/src/main", "client-sdk/src/main", "cli/src/main", "cli/bin", "console/src/main",
            "zk-config/src/main", "zk-config/conf", "ansible", "deploy");
    private static final Set<String> BINARY = Set.of("png", "jpg", "gif", "ico", "jar", "gz", "p12", "jks", "woff2");

    private final Path repo = RepoRoot.path();


    @Test
    void userDocs_nameNoTrackerEntry_andNoFileOutsideTheRepository() throws IOException {
        List<String> found = new ArrayList<>();
        for (Path doc : userDocs()) {
            List<String> lines = Files.readAllLines(doc, StandardCharsets.UTF_8);
            for (int i = 0; i < lines.size(); i++) {
                String line = lines.get(i);
                textFindings(doc, i + 1, line, found);
                Matcher link = LINK.matcher(line);
                while (link.find()) {
                    String problem = linkProblem(doc, link.group(1));
                    if (problem != null) found.add(where(doc, i + 1) + ": " + problem + ": " + link.group(1));
                }
            }
        }
        assertThat(found).as("user docs that cite the tracker or point outside the repository").isEmpty();
    }

    @Test
    void productionSources_nameNoTrackerEntry_andNoFileOutsideTheRepository() throws IOException {
        List<String> found = new ArrayList<>();
        for (String tree : SOURCE_TREES) {
            Path root = repo.resolve(tree);
            if (!Files.isDirectory(root)) continue;
            try (Stream<Path> files = Files.walk(root)) {
                for (Path file : files.filter(Files::isRegularFile).filter(UserDocsTest::isText).toList()) {
                    List<String> lines;
                    try {
                        lines = Files.readAllLines(file, StandardCharsets.UTF_8);
                    } catch (MalformedInputException e) {
                        continue; // not text after all
                    }
                    for (int i = 0; i < lines.size(); i++) textFindings(file, i + 1, lines.get(i), found);
                }
            }
        }
        assertThat(found).as("production sources that cite the tracker or point outside the repository").isEmpty();
    }

    @Test
    void theCheck_findsWhatItLooksFor() {
        List<String> found = new ArrayList<>();
        Path f = repo.resolve("README.md");
        textFindings(f, 1, "as issue 9, finding 14 showed", found);
        textFindings(f, 2, "Issue 12's attacks", found);
        textFindings(f, 3, "the TTL (contract §2.3)", found);
        textFindings(f, 4, "see ../shared/design/contract.md", found);
        textFindings(f, 5, "PKCS#8 keys, HTTP 404, 3 issues, reissue 5 times, a tissue of 2, 404 findings, RFC 9112 §6.3", found);
        assertThat(found).hasSize(4);
        assertThat(linkProblem(repo.resolve("docs/design.md"), "../../shared/design/contract.md")).isNotNull();
        assertThat(linkProblem(repo.resolve("docs/design.md"), "api.md#conventions")).isNull();
        assertThat(linkProblem(repo.resolve("docs/design.md"), "api.md#post-v1acquire--acquire-a-lock")).isNull();
        assertThat(linkProblem(repo.resolve("docs/design.md"), "api.md#no-such-heading")).isNotNull();
        assertThat(linkProblem(repo.resolve("docs/design.md"), "no-such-page.md")).isNotNull();
        assertThat(linkProblem(repo.resolve("README.md"), "https://zookeeper.apache.org/")).isNull();
    }

    private void textFindings(Path file, int lineNo, String line, List<String> found) {
        for (Pattern p : List.of(TRACKER, SECTION, OUTSIDE)) {
            Matcher m = p.matcher(line);
            if (m.find()) found.add(where(file, lineNo) + ": \"" + m.group() + "\" in: " + line.strip());
        }
    }

    /** Why a relative link target is wrong (outside the repository, or no such file), or null when it is fine. */
    private String linkProblem(Path doc, String target) {
        if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*") || target.startsWith("#")) return null; // a URL, an anchor
        String file = target.replaceFirst("#.*$", "");
        if (file.isEmpty()) return null;
        Path resolved = doc.getParent().resolve(file).normalize();
        if (!resolved.startsWith(repo)) return "a link outside the repository";
        if (!Files.exists(resolved)) return "a link to a file that does not exist";
        int hash = target.indexOf('#');
        if (hash >= 0 && resolved.toString().endsWith(".md")) {
            String anchor = target.substring(hash + 1);
            try {
                if (!anchors(resolved).contains(anchor)) return "a link to a heading that does not exist";
            } catch (IOException e) {
                return "a link to an unreadable file (" + e + ")";
            }
        }
        return null;
    }

    private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*?)\\s*#*\\s*$");
    private static final Pattern NOT_IN_SLUG = Pattern.compile("[^\\w\\- ]", Pattern.UNICODE_CHARACTER_CLASS);

    /** The anchors GitHub gives a Markdown file's headings: lower case, punctuation dropped, spaces as dashes. */
    static Set<String> anchors(Path md) throws IOException {
        Set<String> anchors = new HashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        boolean fenced = false;
        for (String line : Files.readAllLines(md, StandardCharsets.UTF_8)) {
            if (line.startsWith("```")) {
                fenced = !fenced;
                continue;
            }
            Matcher m = HEADING.matcher(line);
            if (fenced || !m.matches()) continue;
            String text = m.group(1).toLowerCase(Locale.ROOT).replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1");
            String slug = NOT_IN_SLUG.matcher(text).replaceAll("").replace(' ', '-');
            int n = seen.merge(slug, 1, Integer::sum) - 1;
            anchors.add(n == 0 ? slug : slug + "-" + n);
        }
        return anchors;
    }

    private List<Path> userDocs() throws IOException {
        try (Stream<Path> files = Files.walk(repo)) {
            return files.filter(Files::isRegularFile)
                    .filter(p -> p.getFileName().toString().endsWith(".md"))
                    .filter(p -> {
                        Path rel = repo.relativize(p);
                        for (Path part : rel) {
                            String s = part.toString();
                            if (s.equals("target") || s.equals("node_modules") || s.startsWith(".")) return false;
                        }
                        return !rel.toString().contains("/src/test/");
                    })
                    .sorted()
                    .toList();
        }
    }

    private static boolean isText(Path file) {
        String name = file.getFileName().toString();
        int dot = name.lastIndexOf('.');
        return dot < 0 || !BINARY.contains(name.substring(dot + 1).toLowerCase());
    }

    private String where(Path file, int line) {
        return repo.relativize(file) + ":" + line;
    }
}
