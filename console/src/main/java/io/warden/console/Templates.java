package io.warden.console;

import gg.jte.ContentType;
import gg.jte.TemplateEngine;
import gg.jte.output.StringOutput;
import io.warden.console.view.Page;
import java.util.HashMap;
import java.util.Map;

/**
 * The console's jte templates, precompiled at build time (package {@value #PACKAGE}) and rendered with HTML
 * escaping of every {@code ${...}} (no template uses {@code $unsafe}).
 *
 * <p>Every page template takes {@code Page page} and {@code view} (its own view record, or null when the data could
 * not be read); its live region is the template of the same name with {@code _live} appended.
 *
 * <p>Concurrency: jte's precompiled engine is thread-safe; so is this.
 */
final class Templates {
    static final String PACKAGE = "io.warden.console.jte";

    private final TemplateEngine engine;

    Templates() {
        this.engine = TemplateEngine.createPrecompiled(null, ContentType.Html, Templates.class.getClassLoader(), PACKAGE);
    }

    /** Renders {@code name} ({@code overview}, {@code lock_live}, ...) with the page and the view. */
    String render(String name, Page page, Object view) {
        Map<String, Object> model = new HashMap<>();
        model.put("page", page);
        model.put("view", view);
        StringOutput out = new StringOutput();
        engine.render(name + ".jte", model, out);
        return out.toString();
    }
}
