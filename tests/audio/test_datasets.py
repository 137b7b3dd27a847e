"""emberaudio.datasets on small fake copies, in the published layouts, that the tests write.

Downloads run offline: a pooch downloader that copies a local archive stands in for HTTP,
so the hash check, the cache and the extraction are the real ones.
"""

import hashlib
import io
import shutil
import tarfile
import zipfile

import numpy as np
import pytest
import soundfile

import ember
from emberaudio import datasets
from emberaudio.datasets import utils


def _wav(path, frames=160, rate=16000, value=0.25, fmt=None):
    path.parent.mkdir(parents=True, exist_ok=True)
    subtype = "MPEG_LAYER_III" if fmt == "MP3" else "PCM_16"
    soundfile.write(path, np.full(frames, value, dtype=np.float32), rate, subtype=subtype,
                    format=fmt)


def _tar(folder, archive, arcname=None):
    with tarfile.open(archive, "w:gz") as handle:
        for path in sorted(folder.rglob("*")):
            handle.add(path, arcname=str(path.relative_to(folder)) if arcname is None
                       else f"{arcname}/{path.relative_to(folder)}", recursive=False)


def _sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def offline(monkeypatch):
    """Serves URLs from a dict {url: local file} through pooch's downloader hook."""
    pytest.importorskip("pooch")
    served = {}

    def downloader(url, output_file, pooch_instance):
        shutil.copyfile(served[url], output_file)

    monkeypatch.setattr(utils, "_downloader", downloader)
    return served


def test_yesno(tmp_path):
    for name in ("0_1_0_0_1_0_1_1", "1_1_1_1_0_0_0_0"):
        _wav(tmp_path / "waves_yesno" / f"{name}.wav", rate=8000)
    data = datasets.YESNO(tmp_path)
    assert len(data) == 2
    waveform, rate, labels = data[0]
    assert waveform.shape == (1, 160) and waveform.dtype == ember.float32 and rate == 8000
    assert labels == [0, 1, 0, 0, 1, 0, 1, 1]
    with pytest.raises(RuntimeError, match="download=True"):
        datasets.YESNO(tmp_path / "elsewhere")


def test_yesno_download_checks_the_hash_and_extracts(tmp_path, offline, monkeypatch):
    source = tmp_path / "source"
    _wav(source / "waves_yesno" / "1_0_1_0_1_0_1_0.wav", rate=8000)
    archive = tmp_path / "waves_yesno.tar.gz"
    _tar(source, archive)
    url = "http://www.openslr.org/resources/1/waves_yesno.tar.gz"
    offline[url] = archive
    from emberaudio.datasets import yesno
    # the published hash refuses our fake archive ...
    with pytest.raises(ValueError, match="SHA256 hash of downloaded file"):
        datasets.YESNO(tmp_path / "a", download=True)
    # ... and with the fake's hash published instead, it downloads and extracts
    monkeypatch.setitem(yesno._RELEASE, "sha256", _sha256(archive))
    data = datasets.YESNO(tmp_path / "b", download=True)
    assert len(data) == 1 and data[0][2] == [1, 0, 1, 0, 1, 0, 1, 0]
    assert (tmp_path / "b" / "waves_yesno.tar.gz").is_file()


def _speech_commands(folder):
    for label, speaker, n in [("yes", "0a7c2a8d", 0), ("yes", "0a7c2a8d", 1),
                              ("no", "1b4c9b89", 0), ("no", "2c6d0c2a", 3),
                              ("up", "3d8e1d3b", 0)]:
        _wav(folder / label / f"{speaker}_nohash_{n}.wav")
    _wav(folder / "_background_noise_" / "white_noise.wav", frames=1600)
    (folder / "validation_list.txt").write_text("no/1b4c9b89_nohash_0.wav\n")
    (folder / "testing_list.txt").write_text(
        "up/3d8e1d3b_nohash_0.wav\nyes/0a7c2a8d_nohash_1.wav\n")


def test_speechcommands_subsets(tmp_path):
    _speech_commands(tmp_path / "SpeechCommands" / "speech_commands_v0.02")
    everything = datasets.SPEECHCOMMANDS(tmp_path)
    assert len(everything) == 5
    training = datasets.SPEECHCOMMANDS(tmp_path, subset="training")
    validation = datasets.SPEECHCOMMANDS(tmp_path, subset="validation")
    testing = datasets.SPEECHCOMMANDS(tmp_path, subset="testing")
    assert (len(training), len(validation), len(testing)) == (2, 1, 2)
    waveform, rate, label, speaker, utterance = validation[0]
    assert (rate, label, speaker, utterance) == (16000, "no", "1b4c9b89", 0)
    assert waveform.shape == (1, 160)
    assert {training[i][2] for i in range(2)} == {"yes", "no"}
    path, *rest = testing.get_metadata(1)
    assert path.replace("\\", "/") == "speech_commands_v0.02/yes/0a7c2a8d_nohash_1.wav"
    assert rest == [16000, "yes", "0a7c2a8d", 1]
    with pytest.raises(ValueError, match="subset"):
        datasets.SPEECHCOMMANDS(tmp_path, subset="train")


def test_speechcommands_download_extracts_into_its_folder(tmp_path, offline, monkeypatch):
    source = tmp_path / "source"
    _speech_commands(source)
    archive = tmp_path / "speech_commands_v0.01.tar.gz"
    _tar(source, archive)
    url = "http://download.tensorflow.org/data/speech_commands_v0.01.tar.gz"
    offline[url] = archive
    from emberaudio.datasets import speechcommands
    monkeypatch.setitem(speechcommands._CHECKSUMS, url, _sha256(archive))
    data = datasets.SPEECHCOMMANDS(tmp_path / "root", url="speech_commands_v0.01",
                                   download=True, subset="testing")
    assert len(data) == 2
    assert (tmp_path / "root" / "SpeechCommands" / "speech_commands_v0.01" / "up").is_dir()


def test_librispeech(tmp_path):
    chapter = tmp_path / "LibriSpeech" / "dev-clean" / "84" / "121123"
    for utt in (0, 1):
        _wav(chapter / f"84-121123-{utt:04d}.flac", fmt="FLAC")
    (chapter / "84-121123.trans.txt").write_text(
        "84-121123-0000 GO DO YOU HEAR\n84-121123-0001 BUT IN LESS THAN FIVE MINUTES\n")
    data = datasets.LIBRISPEECH(tmp_path, url="dev-clean")
    assert len(data) == 2
    waveform, rate, transcript, speaker, chapter_id, utterance = data[1]
    assert (rate, transcript, speaker, chapter_id, utterance) == (
        16000, "BUT IN LESS THAN FIVE MINUTES", 84, 121123, 1)
    assert waveform.shape == (1, 160)
    assert data.get_metadata(0)[0].replace("\\", "/") == "dev-clean/84/121123/84-121123-0000.flac"
    with pytest.raises(ValueError, match="Invalid url"):
        datasets.LIBRISPEECH(tmp_path, url="dev-dirty")


def test_ljspeech(tmp_path):
    folder = tmp_path / "LJSpeech-1.1"
    _wav(folder / "wavs" / "LJ001-0001.wav", rate=22050)
    _wav(folder / "wavs" / "LJ001-0002.wav", rate=22050)
    (folder / "metadata.csv").write_text(
        'LJ001-0001|Printing, in the only sense "with which"|Printing, in the only sense '
        '"with which"\nLJ001-0002|in being comparatively modern.|in being comparatively '
        "modern.\n", encoding="utf-8")
    data = datasets.LJSPEECH(tmp_path)
    assert len(data) == 2
    waveform, rate, transcript, normalized = data[0]
    assert rate == 22050 and transcript == 'Printing, in the only sense "with which"'
    assert normalized == transcript and waveform.shape == (1, 160)


def test_vctk(tmp_path):
    root = tmp_path / "VCTK-Corpus-0.92"
    for speaker in ("p225", "p280"):
        for utt in ("001", "002"):
            (root / "txt" / speaker).mkdir(parents=True, exist_ok=True)
            (root / "txt" / speaker / f"{speaker}_{utt}.txt").write_text(f"Please call {utt}.\n")
            _wav(root / "wav48_silence_trimmed" / speaker / f"{speaker}_{utt}_mic1.flac",
                 rate=48000, fmt="FLAC")
            if speaker != "p280":
                _wav(root / "wav48_silence_trimmed" / speaker / f"{speaker}_{utt}_mic2.flac",
                     rate=48000, fmt="FLAC")
    mic2 = datasets.VCTK_092(tmp_path)
    assert len(mic2) == 2  # p280 has no mic2 recordings
    waveform, rate, transcript, speaker, utterance = mic2[1]
    assert (rate, transcript, speaker, utterance) == (48000, "Please call 002.\n", "p225", "002")
    assert len(datasets.VCTK_092(tmp_path, mic_id="mic1")) == 4
    with pytest.raises(RuntimeError, match="mic_id"):
        datasets.VCTK_092(tmp_path, mic_id="mic3")


def test_vctk_download_from_a_zip(tmp_path, offline, monkeypatch):
    buffer = tmp_path / "VCTK-Corpus-0.92.zip"
    wav = io.BytesIO()
    soundfile.write(wav, np.zeros(10, np.float32), 48000, format="FLAC")
    with zipfile.ZipFile(buffer, "w") as handle:
        handle.writestr("txt/p226/p226_001.txt", "Hello.\n")
        handle.writestr("wav48_silence_trimmed/p226/p226_001_mic2.flac", wav.getvalue())
    from emberaudio.datasets import vctk
    offline[vctk.URL] = buffer
    monkeypatch.setitem(vctk._CHECKSUMS, vctk.URL, _sha256(buffer))
    data = datasets.VCTK_092(tmp_path / "root", download=True)
    assert len(data) == 1 and data[0][2:] == ("Hello.\n", "p226", "001")


def test_cmudict(tmp_path):
    (tmp_path / "cmudict-0.7b").write_text(
        ";;; comment line\n"
        "!EXCLAMATION-POINT  EH2 K S K L AH0 M EY1 SH AH0 N P OY2 N T\n"
        "(PAREN  P ER0 EH1 N\n"
        "...ELLIPSIS  IH2 L IH1 P S IH0 S\n"
        "ABBOTT  AE1 B AH0 T\n"
        "ABBOTT(1)  AE1 B AO0 T\n"
        "'BOUT  B AW1 T\n", encoding="latin-1")
    (tmp_path / "cmudict-0.7b.symbols").write_text("AA\nAA0\nAE\nAE1\n")
    data = datasets.CMUDict(tmp_path)
    assert len(data) == 3
    assert data[0] == ("ABBOTT", ["AE1", "B", "AH0", "T"])
    assert data[1] == ("ABBOTT", ["AE1", "B", "AO0", "T"])
    assert data[2] == ("'BOUT", ["B", "AW1", "T"])
    assert data.symbols == ["AA", "AA0", "AE", "AE1"]
    with_marks = datasets.CMUDict(tmp_path, exclude_punctuations=False)
    assert [with_marks[i][0] for i in range(3)] == ["!", "(", "..."]
    with pytest.raises(RuntimeError, match="root directory does not exist"):
        datasets.CMUDict(tmp_path / "cmudict-0.7b.symbols")
    (tmp_path / "empty").mkdir()
    with pytest.raises(RuntimeError, match="dictionary file is not found.*download=True"):
        datasets.CMUDict(tmp_path / "empty")


def test_extract_archive_refuses_escaping_members(tmp_path):
    evil = tmp_path / "evil.tar.gz"
    with tarfile.open(evil, "w:gz") as handle:
        data = b"owned"
        info = tarfile.TarInfo("../outside.txt")
        info.size = len(data)
        handle.addfile(info, io.BytesIO(data))
    with pytest.raises(RuntimeError, match="outside"):
        utils.extract_archive(evil, tmp_path / "out")
    assert not (tmp_path / "outside.txt").exists()
    link = tmp_path / "link.tar"
    with tarfile.open(link, "w") as handle:
        info = tarfile.TarInfo("escape")
        info.type = tarfile.SYMTYPE
        info.linkname = "/etc/passwd"
        handle.addfile(info)
    with pytest.raises(RuntimeError, match="outside"):
        utils.extract_archive(link, tmp_path / "out2")
    evil_zip = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil_zip, "w") as handle:
        handle.writestr("../../zipped.txt", "owned")
    with pytest.raises(RuntimeError, match="outside"):
        utils.extract_archive(evil_zip, tmp_path / "out3")
    not_archive = tmp_path / "plain.txt"
    not_archive.write_text("hello")
    with pytest.raises(RuntimeError, match="not a tar or zip"):
        utils.extract_archive(not_archive)


def test_datasets_work_with_the_dataloader(tmp_path):
    for name in ("0_0_0_0_0_0_0_0", "1_1_1_1_1_1_1_1", "0_1_0_1_0_1_0_1"):
        _wav(tmp_path / "waves_yesno" / f"{name}.wav", rate=8000)
    loader = ember.utils.data.DataLoader(datasets.YESNO(tmp_path), batch_size=3,
                                         collate_fn=lambda items: items)
    (batch,) = list(loader)
    assert [item[2][1] for item in batch] == [0, 1, 1]


def test_libritts(tmp_path):
    folder = tmp_path / "LibriTTS" / "dev-clean" / "84" / "121123"
    uid = "84_121123_000007_000001"
    _wav(folder / f"{uid}.wav", rate=24000)
    (folder / f"{uid}.original.txt").write_text("Mr. Smith's dog.")
    (folder / f"{uid}.normalized.txt").write_text("Mister Smith's dog.")
    data = datasets.LIBRITTS(tmp_path, url="dev-clean")
    assert len(data) == 1
    waveform, rate, original, normalized, speaker, chapter, utterance = data[0]
    assert (rate, original, normalized, speaker, chapter, utterance) == (
        24000, "Mr. Smith's dog.", "Mister Smith's dog.", 84, 121123, uid)
    assert waveform.shape == (1, 160)


def test_cmuarctic_keeps_whole_transcripts(tmp_path, offline, monkeypatch):
    source = tmp_path / "source" / "cmu_us_slt_arctic"
    _wav(source / "wav" / "arctic_a0001.wav")
    _wav(source / "wav" / "arctic_b0002.wav")
    (source / "etc").mkdir(parents=True)
    (source / "etc" / "txt.done.data").write_text(
        '( arctic_a0001 "Author of the danger trail, Philip Steels, etc." )\n'
        '( arctic_b0002 "He said "no" twice." )\n')
    archive = tmp_path / "cmu_us_slt_arctic.tar.bz2"
    with tarfile.open(archive, "w:bz2") as handle:
        handle.add(source, arcname="cmu_us_slt_arctic")
    from emberaudio.datasets import cmuarctic
    url = "http://www.festvox.org/cmu_arctic/packed/cmu_us_slt_arctic.tar.bz2"
    offline[url] = archive
    monkeypatch.setitem(cmuarctic._CHECKSUMS, "slt", _sha256(archive))
    data = datasets.CMUARCTIC(tmp_path / "root", url="slt", download=True)
    assert len(data) == 2
    waveform, rate, transcript, utterance = data[0]
    assert (rate, transcript, utterance) == (
        16000, "Author of the danger trail, Philip Steels, etc.", "a0001")
    assert data[1][2:] == ('He said "no" twice.', "b0002")


def test_commonvoice(tmp_path):
    _wav(tmp_path / "clips" / "common_voice_en_1.mp3", rate=48000, fmt="MP3")
    (tmp_path / "train.tsv").write_text(
        "client_id\tpath\tsentence\tup_votes\tdown_votes\tage\tgender\taccent\n"
        "abc\tcommon_voice_en_1.mp3\tHello there.\t2\t0\tthirties\tfemale\t\n")
    data = datasets.COMMONVOICE(tmp_path)
    assert len(data) == 1
    waveform, rate, row = data[0]
    assert rate == 48000 and waveform.shape[0] == 1
    assert row["sentence"] == "Hello there." and row["path"] == "common_voice_en_1.mp3"
    (tmp_path / "bad.tsv").write_text("client_id\tfile\n")
    with pytest.raises(ValueError, match="header"):
        datasets.COMMONVOICE(tmp_path, tsv="bad.tsv")


def test_fluent_speech_commands(tmp_path):
    folder = tmp_path / "fluent_speech_commands_dataset"
    _wav(folder / "wavs" / "speakers" / "2BqVo8kVB2Skwgyb" / "0a312040-44.wav")
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "valid_data.csv").write_text(
        ",path,speakerId,transcription,action,object,location\n"
        "0,wavs/speakers/2BqVo8kVB2Skwgyb/0a312040-44.wav,2BqVo8kVB2Skwgyb,"
        "Turn on the lights,activate,lights,none\n")
    data = datasets.FluentSpeechCommands(tmp_path, subset="valid")
    assert len(data) == 1
    waveform, *rest = data[0]
    assert rest == [16000, "0a312040-44", "2BqVo8kVB2Skwgyb", "Turn on the lights",
                    "activate", "lights", "none"]
    assert waveform.shape == (1, 160)
    with pytest.raises(ValueError, match="subset"):
        datasets.FluentSpeechCommands(tmp_path, subset="dev")


def test_tedlium_segments(tmp_path):
    folder = tmp_path / "TEDLIUM_release1" / "test"
    rate = 16000
    talk = np.concatenate([np.full(rate, 0.1), np.full(rate, -0.2)]).astype(np.float32)
    (folder / "sph").mkdir(parents=True)
    soundfile.write(folder / "sph" / "AlGore_2009.sph", talk, rate, format="NIST",
                    subtype="PCM_16")
    (folder / "stm").mkdir()
    (folder / "stm" / "AlGore_2009.stm").write_text(
        "AlGore_2009 1 AlGore_2009 0.00 0.50 <o,f0,male> hello world\n"
        "AlGore_2009 1 AlGore_2009 1.25 2.00 <o,f0,male> second part\n")
    (tmp_path / "TEDLIUM_release1" / "TEDLIUM.150K.dic").write_text("hello HH AH L OW\nuh\n")
    data = datasets.TEDLIUM(tmp_path, release="release1", subset="test")
    assert len(data) == 2
    waveform, rate_read, transcript, talk_id, speaker, identifier = data[1]
    assert (rate_read, transcript, talk_id, speaker, identifier) == (
        16000, "second part\n", "AlGore_2009", "AlGore_2009", "<o,f0,male>")
    assert waveform.shape == (1, 12000)
    np.testing.assert_allclose(waveform.numpy(), -0.2, atol=1e-4)
    assert data.phoneme_dict == {"hello": ("HH", "AH", "L", "OW"), "uh": ()}
    with pytest.raises(RuntimeError, match="release"):
        datasets.TEDLIUM(tmp_path, release="release4")


def test_gtzan_walks_the_genre_folders(tmp_path):
    genres = tmp_path / "genres"
    _wav(genres / "blues" / "blues.00000.wav", rate=22050, value=0.5)
    _wav(genres / "blues" / "blues.00001.wav", rate=22050)
    _wav(genres / "rock" / "rock.00042.wav", rate=22050)
    _wav(genres / "rock" / "rock.42.wav", rate=22050)          # not <genre>.<5 digits>
    _wav(genres / "rock" / "jazz_copy.wav", rate=22050)
    _wav(genres / "polka" / "polka.00000.wav", rate=22050)     # not a GTZAN genre
    data = datasets.GTZAN(tmp_path)
    assert len(data) == 3 and data._walker == ["blues.00000", "blues.00001", "rock.00042"]
    waveform, rate, label = data[0]
    assert waveform.shape == (1, 160) and rate == 22050 and label == "blues"
    np.testing.assert_allclose(waveform.numpy(), 0.5, atol=1e-4)
    assert data[2][2] == "rock"
    with pytest.raises(ValueError, match="subset"):
        datasets.GTZAN(tmp_path, subset="train")
    with pytest.raises(RuntimeError, match="download=True"):
        datasets.GTZAN(tmp_path / "elsewhere")


def test_gtzan_filtered_split(tmp_path):
    from emberaudio.datasets import gtzan
    train, valid, test = gtzan.filtered_train, gtzan.filtered_valid, gtzan.filtered_test
    assert (len(train), len(valid), len(test)) == (443, 197, 290)
    assert not (set(train) & set(valid) or set(train) & set(test) or set(valid) & set(test))
    assert train[:3] == ["blues.00029", "blues.00030", "blues.00031"]
    assert valid[-1] == "rock.00085" and test[0] == "blues.00012" and test[-1] == "rock.00090"
    # A few published membership facts of the filtered split.
    assert "jazz.00073" in test and "hiphop.00081" in valid and "country.00008" not in (
        set(train) | set(valid) | set(test))
    _wav(tmp_path / "genres" / "blues" / "blues.00029.wav", rate=22050)
    data = datasets.GTZAN(tmp_path, subset="training")
    assert len(data) == 443 and data[0][1:] == (22050, "blues")


def test_gtzan_download_checks_the_hash(tmp_path, offline, monkeypatch):
    source = tmp_path / "src"
    _wav(source / "genres" / "pop" / "pop.00007.wav", rate=22050)
    archive = tmp_path / "genres.tar.gz"
    _tar(source, archive)
    from emberaudio.datasets import gtzan
    offline[gtzan.URL] = archive
    with pytest.raises(ValueError, match="SHA256|hash"):
        datasets.GTZAN(tmp_path / "a", download=True)
    monkeypatch.setitem(gtzan._CHECKSUMS, gtzan.URL, _sha256(archive))
    data = datasets.GTZAN(tmp_path / "b", download=True)
    assert len(data) == 1 and data[0][2] == "pop"


def _musdb_track(folder, frames=64, sources=("bass", "drums", "other", "vocals", "mixture")):
    for i, source in enumerate(sources):
        folder.mkdir(parents=True, exist_ok=True)
        soundfile.write(folder / f"{source}.wav",
                        np.full((frames, 2), 0.125 * i, dtype=np.float32), 44100,
                        subtype="PCM_16")


def test_musdb_hq(tmp_path):
    base = tmp_path / "musdb18hq"
    _musdb_track(base / "train" / "A Band - A Song")
    _musdb_track(base / "train" / "Leaf - Summerghost")
    _musdb_track(base / "test" / "Test Band - Test Song", frames=32)
    data = datasets.MUSDB_HQ(tmp_path, "train")
    assert len(data) == 2 and data.names == ["A Band - A Song", "Leaf - Summerghost"]
    stems, rate, frames, name = data[0]
    assert stems.shape == (4, 2, 64) and rate == 44100 and frames == 64
    assert name == "A Band - A Song"
    np.testing.assert_allclose(stems.numpy()[:, 0, 0], [0, 0.125, 0.25, 0.375], atol=1e-4)
    mix = datasets.MUSDB_HQ(tmp_path, "train", sources=["mixture", "vocals"])
    np.testing.assert_allclose(mix[0][0].numpy()[:, 1, 5], [0.5, 0.375], atol=1e-4)
    assert datasets.MUSDB_HQ(tmp_path, "train", split="train").names == ["A Band - A Song"]
    valid = datasets.MUSDB_HQ(tmp_path, "train", split="validation")
    assert len(valid) == 14 and valid.names[0] == "Actions - One Minute Smile"
    test = datasets.MUSDB_HQ(tmp_path, "test")
    assert len(test) == 1 and test[0][0].shape == (4, 2, 32)
    with pytest.raises(ValueError, match="subset"):
        datasets.MUSDB_HQ(tmp_path, "valid")
    with pytest.raises(ValueError, match="split"):
        datasets.MUSDB_HQ(tmp_path, "train", split="test")
    with pytest.raises(ValueError, match="sources"):
        datasets.MUSDB_HQ(tmp_path, "train", sources=["guitar"])
    with pytest.raises(RuntimeError, match="download=True"):
        datasets.MUSDB_HQ(tmp_path / "elsewhere", "train")


def test_musdb_hq_checks_rates_and_lengths(tmp_path):
    track = tmp_path / "musdb18hq" / "train" / "T - S"
    _musdb_track(track)
    soundfile.write(track / "drums.wav", np.zeros((10, 2), np.float32), 44100)
    with pytest.raises(ValueError, match="num_frames"):
        datasets.MUSDB_HQ(tmp_path, "train")[0]
    soundfile.write(track / "drums.wav", np.zeros((64, 2), np.float32), 22050)
    with pytest.raises(ValueError, match="sample rate"):
        datasets.MUSDB_HQ(tmp_path, "train")[0]


def test_musdb_hq_download_extracts_the_zip(tmp_path, offline, monkeypatch):
    archive = tmp_path / "musdb18hq.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        for source in ("bass", "drums", "other", "vocals"):
            wav = io.BytesIO()
            soundfile.write(wav, np.zeros((8, 2), np.float32), 44100, format="WAV")
            handle.writestr(f"test/Band - Song/{source}.wav", wav.getvalue())
    from emberaudio.datasets import musdb_hq
    offline[musdb_hq._URL] = archive
    monkeypatch.setattr(musdb_hq, "_CHECKSUM", _sha256(archive))
    data = datasets.MUSDB_HQ(tmp_path / "root", "test", download=True)
    assert len(data) == 1 and data[0][1:] == (44100, 8, "Band - Song")
    assert (tmp_path / "root" / "musdb18hq" / "test" / "Band - Song" / "bass.wav").is_file()


def _librilight(base, folder, speaker, chapter, utterances):
    chapter_dir = base / folder / str(speaker) / str(chapter)
    lines = []
    for utt in utterances:
        fileid = f"{speaker}-{chapter}-{utt:04d}"
        _wav(chapter_dir / f"{fileid}.flac", fmt="FLAC")
        lines.append(f"{fileid} WORDS OF {utt}")
    (chapter_dir / f"{speaker}-{chapter}.trans.txt").write_text("\n".join(lines) + "\n")


def test_librilight_limited_subsets(tmp_path):
    base = tmp_path / "librispeech_finetuning"
    _librilight(base, "1h/0/clean", 103, 1240, [0, 1])
    _librilight(base, "1h/3/other", 250, 142, [7])
    _librilight(base, "9h/clean", 19, 198, [3])
    ten_min = datasets.LibriLightLimited(tmp_path)
    assert len(ten_min) == 2
    waveform, rate, transcript, speaker, chapter, utterance = ten_min[1]
    assert waveform.shape == (1, 160) and rate == 16000
    assert (transcript, speaker, chapter, utterance) == ("WORDS OF 1", 103, 1240, 1)
    assert len(datasets.LibriLightLimited(tmp_path, "1h")) == 3
    ten_h = datasets.LibriLightLimited(tmp_path, "10h")
    assert len(ten_h) == 4 and ten_h[3][3:] == (19, 198, 3)
    with pytest.raises(ValueError, match="subset"):
        datasets.LibriLightLimited(tmp_path, "5h")
    with pytest.raises(RuntimeError, match="download=True"):
        datasets.LibriLightLimited(tmp_path / "elsewhere")


def test_librilight_limited_download(tmp_path, offline, monkeypatch):
    source = tmp_path / "src"
    _librilight(source / "librispeech_finetuning", "1h/0/clean", 1, 2, [5])
    archive = tmp_path / "librispeech_finetuning.tgz"
    _tar(source, archive)
    from emberaudio.datasets import librilight_limited
    offline[librilight_limited._URL] = archive
    monkeypatch.setattr(librilight_limited, "_CHECKSUM", _sha256(archive))
    data = datasets.LibriLightLimited(tmp_path / "root", download=True)
    assert len(data) == 1 and data[0][2:] == ("WORDS OF 5", 1, 2, 5)


def _dr_vctk(root, subset, rows):
    base = root / "DR-VCTK" / "DR-VCTK"
    header = ["# device recording log", "file\tsource\tchannel"][:2 if subset == "train" else 1]
    (base / "configurations").mkdir(parents=True, exist_ok=True)
    (base / "configurations" / f"{subset}_ch_log.txt").write_text(
        "\n".join(header + [f"{f}\t{s}\t{c}" for f, s, c in rows]) + "\n")
    for i, (filename, _, _) in enumerate(rows):
        _wav(base / f"clean_{subset}set_wav_16k" / filename, value=0.5)
        _wav(base / f"device-recorded_{subset}set_wav_16k" / filename, value=0.125 * (i + 1))


def test_dr_vctk(tmp_path):
    _dr_vctk(tmp_path, "train", [("p226_002.wav", "dev1", 3), ("p225_001.wav", "dev2", 1)])
    _dr_vctk(tmp_path, "test", [("p232_010.wav", "dev3", 2)])
    data = datasets.DR_VCTK(tmp_path)
    assert len(data) == 2
    clean, clean_rate, noisy, noisy_rate, speaker, utterance, source, channel = data[0]
    assert clean.shape == noisy.shape == (1, 160) and clean_rate == noisy_rate == 16000
    assert (speaker, utterance, source, channel) == ("p225", "001", "dev2", 1)
    np.testing.assert_allclose(noisy.numpy(), 0.25, atol=1e-4)
    np.testing.assert_allclose(clean.numpy(), 0.5, atol=1e-4)
    test = datasets.DR_VCTK(tmp_path, "test")
    assert len(test) == 1 and test[0][4:] == ("p232", "010", "dev3", 2)
    with pytest.raises(RuntimeError, match="subset"):
        datasets.DR_VCTK(tmp_path, "valid")
    with pytest.raises(RuntimeError, match="download=True"):
        datasets.DR_VCTK(tmp_path / "elsewhere")
