"""Build machinery: executing the notebooks, the records a chapter leaves for its pages, provenance lines, the execution page, the hosting repository and the citation."""
