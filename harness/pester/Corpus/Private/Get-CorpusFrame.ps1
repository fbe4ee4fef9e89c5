function Get-CorpusFrame {
    # Every frame of every captured stack of a cell, each with where it came from. facts.json's captures carry their
    # threads' frames, also after the capture files were pruned; without facts.json, the stack files on disk:
    # dump-facts' JSON (threads[].frames) and the text backtraces of winedbg and Mono (one frame a line).
    param([Parameter(Mandatory)] $Cell)
    if ($Cell.Facts) {
        foreach ($capture in $Cell.Captures) {
            foreach ($thread in $capture.Threads) {
                foreach ($frame in @($thread.frames)) {
                    [pscustomobject]@{ File = $capture.Path; Thread = $thread.thread; Frame = $frame }
                }
            }
        }
        return
    }
    foreach ($file in $Cell.StackSnapshots) {
        if ($file -like '*.json') {
            $doc = Get-Content -Raw -LiteralPath $file | ConvertFrom-Json
            foreach ($thread in @($doc.threads)) {
                foreach ($frame in @($thread.frames)) {
                    [pscustomobject]@{ File = $file; Thread = "managed $($thread.managedThreadId)"; Frame = $frame }
                }
            }
        }
        else {
            foreach ($line in Get-Content -LiteralPath $file) {
                if ($line.Trim()) { [pscustomobject]@{ File = $file; Thread = ''; Frame = $line.Trim() } }
            }
        }
    }
}
