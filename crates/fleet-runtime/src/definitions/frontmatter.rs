//! Splitting a Markdown file into frontmatter and body, and reading loose YAML. (Stub.)
