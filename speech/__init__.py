"""The lecture's narration: what each caption says aloud (spoken), the voices that say it offline (voices), audio
helpers (audio), the line cache (synth_cache), each line's id, audio and length for a scene (narrator), the audio in
the clips (mux) and the script a lecturer records from (script). See docs/voices.md."""
