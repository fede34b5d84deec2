#!/usr/bin/env python3
"""Transcribe a media file with Whisper and write subtitles."""
import argparse
import whisper
from whisper.utils import get_writer


def main():
    p = argparse.ArgumentParser()
    p.add_argument("input")
    p.add_argument("--model", default="turbo")
    p.add_argument("--language", default=None)
    p.add_argument("--format", default="srt")
    p.add_argument("--out", default=".")
    a = p.parse_args()
    model = whisper.load_model(a.model)
    result = model.transcribe(a.input, language=a.language, word_timestamps=True)
    writer = get_writer(a.format, a.out)
    writer(result, a.input)


if __name__ == "__main__":
    main()
