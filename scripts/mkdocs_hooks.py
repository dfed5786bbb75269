"""mkdocs hooks (mkdocs.yml ``hooks:``): the site's rule catalogue and nav come from the registry,
so adding a rule touches no docs file but the rule's own page."""

from rocm_lint.docgen import render_catalogue, rules_nav


def on_config(config):
    for i, entry in enumerate(config["nav"] or []):
        if isinstance(entry, dict) and entry.get("Rules") == "rules/index.md":
            config["nav"][i] = {"Rules": rules_nav()}
    return config


def on_page_markdown(markdown, page, config, files):
    if page.file.src_uri == "rules/index.md":
        return markdown.rstrip("\n") + "\n\n" + render_catalogue()
    return markdown
