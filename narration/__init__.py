"""Narration voices, audio helpers and the synthesis cache (see narration/voices.py, audio.py, synth_cache.py)."""
