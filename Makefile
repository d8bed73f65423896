# linbook: the two commands in README.md are `make book` and `make test`.
# Everything runs in .venv, created here from the locked environment.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.linbook-installed
# nbval's other options are in pyproject.toml ([tool.pytest.ini_options]), so a plain
# `pytest --nbval chapters` is the same check.
NBVAL  := --nbval
JOBS   ?= 2
# The second run of the notebooks uses another OpenBLAS kernel and one thread, so an
# output that depends on the kernel fails here, on any machine (not only on the CPU
# where the outputs happened to be stored).
ALT_BLAS ?= $(if $(filter x86_64,$(shell uname -m)),OPENBLAS_CORETYPE=Prescott) OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1

.PHONY: help env book student test unit nbval nbval-alt notebooks bench lock backmatter clean browser live

help:
	@echo "make book       build the website into _build/html (warnings are errors)"
	@echo "make test       unit tests + nbval over every notebook + site checks"
	@echo "make notebooks  generate chapters/NN_*.ipynb (with outputs) from the .md sources (NB=chapters/03_perceptron.md for one)"
	@echo "make student    build the student edition (no solutions) into _build_student/_build/html"
	@echo "make browser    check the built site in headless Chromium (screenshots in tests/browser/screenshots)"
	@echo "make live       serve the site with \"Live code\": its cells run on a local Jupyter kernel (Ctrl-C stops)"
	@echo "make bench      run the benchmark table (linbook vs scikit-learn/statsmodels)"

# The locked environment needs Python >= 3.11 (numpy 2.4); on 3.10 we fall back to the
# lower-bounded ranges of pyproject.toml and say so.
$(STAMP): requirements.lock pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	@if $(BIN)/python -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then \
	  $(BIN)/python -m pip install -q -r requirements.lock && \
	  $(BIN)/python -m pip install -q --no-deps -e . ; \
	else \
	  echo "Python < 3.11: installing from pyproject ranges, not the lock file (outputs may differ)"; \
	  $(BIN)/python -m pip install -q -e '.[book,test]' ; \
	fi
	@touch $(STAMP)

env: $(STAMP)

backmatter: env
	$(BIN)/python tools/gen_backmatter.py
	$(BIN)/python tools/gen_index.py

book: env backmatter
	$(BIN)/jupyter-book build --all -W -n --keep-going .
	@echo "Site built: $(CURDIR)/_build/html/index.html"

student: env backmatter
	$(BIN)/python tools/student_edition.py _build_student
	@echo "Student edition built: $(CURDIR)/_build_student/_build/html/index.html"

# 1. The site build (one core) runs beside the unit tests (everything in tests/ that does not
#    need the built site), so neither core idles while Sphinx works.
# 2. nbval over every notebook and the checks of the built site (tests/test_site.py and the
#    browser test, which runs when Chromium is present; the line printed before and after
#    says plainly whether it ran), in one pytest session on $(JOBS) workers (one notebook
#    per worker: cells of a notebook share a kernel).
# 3. nbval runs every notebook again under a second BLAS setting ($(ALT_BLAS)).
test: env
	rm -rf _build/html   # no stale page from an earlier build reaches the site checks
	@echo "site build (log: _build_log.txt) beside the unit tests"
	@$(BIN)/jupyter-book build --all -W -n --keep-going . > _build_log.txt 2>&1 & book=$$!; \
	$(BIN)/python -m pytest -n $(JOBS) --dist loadfile -rs -m "not site" tests; unit=$$?; \
	if ! wait $$book; then cat _build_log.txt; echo "make test: the site build failed (log above)"; exit 1; fi; \
	exit $$unit
	@$(BIN)/python tests/browser/browserlib.py
	$(BIN)/python -m pytest -n $(JOBS) --dist loadfile -rs $(NBVAL) tests/test_site.py tests/browser chapters
	@$(BIN)/python tests/browser/browserlib.py
	$(MAKE) --no-print-directory nbval-alt

# Only the browser test, on the site in _build/html (built first if missing).
browser: env
	@test -f _build/html/index.html || $(MAKE) book
	@$(BIN)/python tests/browser/browserlib.py
	$(BIN)/python -m pytest -q -rs tests/browser

# The site (built first if missing) and a Jupyter server, both on 127.0.0.1 (tools/live.py):
# prints the site's address; a chapter's "Live code" runs its cells there. Ctrl-C stops both.
live: env
	@test -f _build/html/index.html || $(MAKE) --no-print-directory book
	@$(BIN)/python tools/live.py

unit: env
	$(BIN)/python -m pytest -n $(JOBS) --dist loadfile tests -m "not site"

nbval: env
	$(BIN)/python -m pytest -n $(JOBS) --dist loadfile $(NBVAL) chapters

nbval-alt: env
	@echo "nbval under a second BLAS setting: $(ALT_BLAS)"
	env $(ALT_BLAS) $(BIN)/python -m pytest -q -n $(JOBS) --dist loadfile $(NBVAL) chapters

notebooks: env
	$(BIN)/python tools/build_notebooks.py $(NB)

# Benchmarks run on the machine's native BLAS kernel (OPENBLAS_CORETYPE / L2_SIZE unset).
bench: env
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(BIN)/python benchmarks/run.py $(BENCH)

lock:
	$(BIN)/python -m pip freeze --exclude-editable | grep -vi '^linbook' > requirements.lock.new
	@(echo '# Locked environment for the book and CI (Python 3.11+). Regenerate with: make lock'; cat requirements.lock.new) > requirements.lock; rm requirements.lock.new

clean:
	rm -rf _build _build_student _build_log.txt

# The whole book as one PDF, offline: Jupyter Book's pdflatex builder with XeLaTeX (needs
# texlive-xetex texlive-latex-extra texlive-fonts-recommended latexmk xindy
# texlive-lang-chinese texlive-lang-cjk fonts-wqy-microhei; .ci/run installs them).
.PHONY: pdf
pdf: env backmatter
	$(BIN)/jupyter-book build --all --builder pdflatex .
	@echo "PDF built: $(CURDIR)/_build/latex/book.pdf"
