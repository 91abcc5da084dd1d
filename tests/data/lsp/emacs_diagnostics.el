;;; emacs_diagnostics.el --- headless Emacs: open a file under eglot, print flymake diagnostics  -*- lexical-binding: t -*-

;; Run after the user's init (the editors/README.md snippet):
;;   emacs --batch -Q -l init.el -l emacs_diagnostics.el
;; Arguments come from the environment: TFCOACH_FILE (the Python file to open) and
;; TFCOACH_TIMEOUT (seconds to wait for diagnostics).  Each flymake diagnostic is
;; printed to stdout as one JSON line.  Exit status: 0 on success, 2 on timeout, 3 if
;; eglot did not connect, 4 if eglot is not installed.

;; -Q leaves out site-lisp, where Debian's elpa-eglot lives (Emacs 29+ has eglot built in).
(require 'package)
(add-to-list 'package-directory-list "/usr/share/emacs/site-lisp/elpa" t)
(package-initialize)
(unless (require 'eglot nil t)
  (message "tfcoach-emacs: eglot is not installed")
  (kill-emacs 4))
(require 'flymake)
(require 'json)

(defvar tfcoach-file (getenv "TFCOACH_FILE"))
(defvar tfcoach-timeout (string-to-number (or (getenv "TFCOACH_TIMEOUT") "20")))

(setq eglot-sync-connect t
      eglot-connect-timeout tfcoach-timeout)

(defun tfcoach-fail (status what)
  "Explain WHAT went wrong on stderr (with eglot's event log) and exit with STATUS."
  (message "tfcoach-emacs: %s" what)
  (dolist (buffer (buffer-list))
    (when (string-match-p "EGLOT.*\\(events\\|stderr\\)" (buffer-name buffer))
      (message "---- %s ----\n%s" (buffer-name buffer)
               (with-current-buffer buffer (buffer-string)))))
  (kill-emacs status))

(defun tfcoach-position (pos)
  "1-based line and 0-based character column of POS."
  (save-excursion
    (goto-char pos)
    (list (line-number-at-pos pos t) (- pos (line-beginning-position)))))

;; Visiting the file runs `python-mode-hook', hence the snippet's `eglot-ensure', which
;; connects on the next command: run the command hooks once, as the command loop would.
(find-file tfcoach-file)
(run-hooks 'post-command-hook)
(unless (eglot-current-server)
  (tfcoach-fail 3 (format "eglot is not managing %s (major mode %s)" tfcoach-file major-mode)))

(let ((deadline (+ (float-time) tfcoach-timeout)))
  (while (and (null (flymake-diagnostics)) (< (float-time) deadline))
    (accept-process-output nil 0.05)
    ;; flymake normally starts from its idle timer; batch Emacs is never idle.
    (unless (flymake-running-backends) (flymake-start))))
(unless (flymake-diagnostics)
  (tfcoach-fail 2 (format "no flymake diagnostics after %ss" tfcoach-timeout)))

(dolist (diag (flymake-diagnostics))
  (let ((beg (tfcoach-position (flymake-diagnostic-beg diag)))
        (end (tfcoach-position (flymake-diagnostic-end diag))))
    (princ (json-encode
            `((line . ,(nth 0 beg)) (column . ,(nth 1 beg))
              (end_line . ,(nth 0 end)) (end_column . ,(nth 1 end))
              (type . ,(symbol-name (flymake-diagnostic-type diag)))
              (text . ,(flymake-diagnostic-text diag)))))
    (terpri)))

(eglot-shutdown (eglot-current-server) nil 5)
(kill-emacs 0)
