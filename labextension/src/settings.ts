/** The coach's user settings (labextension/schema/plugin.json), with a change signal. */
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ISignal, Signal } from '@lumino/signaling';

import { IRuleSettings } from './api';

export interface ICoachSettings {
  showInlineFindings: boolean;
  showCellBadges: boolean;
  ignoreRules: string[];
  /** The Memory Deck shows the definition first, the term on flip. */
  deckDefinitionFirst: boolean;
}

export const DEFAULT_SETTINGS: ICoachSettings = {
  showInlineFindings: true,
  showCellBadges: true,
  ignoreRules: [],
  deckDefinitionFirst: false
};

export class CoachSettings {
  private _value: ICoachSettings = { ...DEFAULT_SETTINGS };
  private _changed = new Signal<this, ICoachSettings>(this);

  get value(): ICoachSettings {
    return this._value;
  }

  get changed(): ISignal<this, ICoachSettings> {
    return this._changed;
  }

  /**
   * The rule settings sent with each analysis (the server applies them on top of the
   * notebook folder's `[tool.tfcoach]`): a non-empty ignore list replaces the project's,
   * an empty one leaves the project's as it is.
   */
  get ruleSettings(): IRuleSettings {
    const ignore = this._value.ignoreRules;
    return ignore.length > 0 ? { ignore: [...ignore] } : {};
  }

  update(raw: Partial<Record<keyof ICoachSettings, unknown>>): void {
    const ignore = Array.isArray(raw.ignoreRules)
      ? raw.ignoreRules
          .filter((c): c is string => typeof c === 'string')
          .map(c => c.trim().toUpperCase())
      : [];
    this._value = {
      showInlineFindings: raw.showInlineFindings !== false,
      showCellBadges: raw.showCellBadges !== false,
      ignoreRules: ignore,
      deckDefinitionFirst: raw.deckDefinitionFirst === true
    };
    this._changed.emit(this._value);
  }

  /** Follow a plugin's settings in the registry. */
  async connect(registry: ISettingRegistry, pluginId: string): Promise<void> {
    const settings = await registry.load(pluginId);
    const read = () =>
      this.update(settings.composite as Partial<Record<keyof ICoachSettings, unknown>>);
    settings.changed.connect(read);
    read();
  }
}
