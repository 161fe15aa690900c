"""The web layer: the Flask app, the respondent's pages, the researcher's pages and the
public results page. Routes parse a request, call the domain, and render a page."""
